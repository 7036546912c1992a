"""``recallbench view`` as a user types it: the run command's subcommand, `python -m`, errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from recallbench.cli import main

SRC = Path(__file__).resolve().parents[2] / "src"


def test_recallbench_view_writes_the_report_and_prints_its_path(
    view_runs, tmp_path, monkeypatch, capsys
):
    out = tmp_path / "a_vs_b.html"
    argv = [
        "recallbench",
        "view",
        str(view_runs["full_history"]),
        "--compare",
        str(view_runs["memory_retrieval"]),
        "--metric",
        "rouge_l",
        "-o",
        str(out),
    ]
    monkeypatch.setattr(sys, "argv", argv)
    main()
    assert capsys.readouterr().out.strip() == str(out)
    assert "msc-full_history vs msc-memory_retrieval" in out.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["{tmp}/nowhere"], "{tmp}/nowhere: no such folder"),
        (["{tmp}"], "{tmp}: no run folders in it"),
        (["{run}", "--compare", "{run}", "--metric", "f1"], "--metric f1: not scored per item"),
    ],
)
def test_mistakes_are_one_line_and_exit_2(view_runs, tmp_path, monkeypatch, capsys, args, message):
    fill = {"tmp": str(tmp_path), "run": str(view_runs["full_history"])}
    monkeypatch.setattr(sys, "argv", ["recallbench", "view", *(a.format(**fill) for a in args)])
    with pytest.raises(SystemExit) as stop:
        main()
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith("recallbench view: error: " + message.format(**fill))


def test_python_m_spelling_dispatches_view(view_runs, tmp_path):
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    sweep = view_runs["full_history"].parent
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "recallbench.cli",
            "view",
            str(sweep),
            "-o",
            str(tmp_path / "s.html"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp_path / "s.html")
