"""``recallbench import-answers --format longmemeval``: a labelled hypothesis file becomes a run
folder with the labels' per-type accuracy; bad files fail in one line, exit 2, no folder.

Fixture ``data/fixtures/longmemeval_import/``: ten questions in the official format
(``longmemeval/longmemeval_oracle.json``, loaded by ``dataset=longmemeval``) and the authors'
judged output for them, labels chosen by hand: single-session-user 2/3, -assistant 1/1,
-preference 0/1, multi-session 1/2, temporal-reasoning 1/2, knowledge-update 0/1; overall 5/10,
task-averaged (2/3 + 1 + 0 + 1/2 + 1/2 + 0) / 6 = 44.44, abstention 1/2.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from recallbench import cli

FIX = Path(__file__).resolve().parents[2] / "data" / "fixtures" / "longmemeval_import"
JUDGED = FIX / "hypotheses.jsonl.eval-results-gpt-4o"


@pytest.fixture
def importer(monkeypatch, capsys, tmp_path):
    """Call ``recallbench import-answers <argv>`` in-process: (status, stdout, stderr)."""

    def call(*argv: str) -> tuple[int, str, str]:
        args = ["recallbench", "import-answers", *argv, f"paths.data_dir={FIX}"]
        args += [f"paths.results_dir={tmp_path / 'results'}", "progress=false"]
        args += ["wandb.mode=disabled"]
        monkeypatch.setattr(sys, "argv", args)
        capsys.readouterr()
        status = 0
        try:
            cli.main()
        except SystemExit as exc:
            status = int(exc.code or 0)
        got = capsys.readouterr()
        return status, got.out, got.err

    return call


def _pct(entry: dict) -> float:
    return round(100 * entry["value"], 2)


def test_a_labelled_file_imports_with_its_per_type_accuracy(importer):
    status, out, err = importer(str(JUDGED), "--format", "longmemeval", "--name", "fx")
    assert status == 0, err
    folder = Path(out.strip().splitlines()[-1])
    summary = json.loads((folder / "summary.json").read_text())
    shipped = summary["metrics"]["accuracy_autoeval"]
    assert _pct(shipped) == 50.0
    assert {t: _pct(e) for t, e in shipped["subsets"].items()} == {
        "single-session-user": 66.67,
        "single-session-assistant": 100.0,
        "single-session-preference": 0.0,
        "multi-session": 50.0,
        "temporal-reasoning": 50.0,
        "knowledge-update": 0.0,
        "abstention": 50.0,
    }
    assert _pct(summary["metrics"]["task_averaged_autoeval"]) == 44.44
    assert {"accuracy", "task_averaged", "agree_j", "kappa_j"} <= set(summary["metrics"])
    run = json.loads((folder / "run.json").read_text())
    assert run["imported"]["matching"]["matched"] == 10 and run["imported"]["labelled"]
    assert run["imported"]["label_models"] == ["gpt-4o-2024-08-06"]
    config = (folder / "config.yaml").read_text()
    assert "longmemeval_import" in config and "name: longmemeval" in config


def test_errata_override_adds_the_clean_subset(importer):
    status, out, err = importer(
        str(JUDGED), "--format", "longmemeval", "--name", "e", "protocol.errata=default"
    )
    assert status == 0, err
    summary = json.loads((Path(out.strip().splitlines()[-1]) / "summary.json").read_text())
    # no fixture id is listed in the default errata: every question is clean
    assert summary["metrics"]["accuracy_autoeval"]["subsets"]["clean"]["n"] == 10
    assert summary["errata"]["flagged_in_run"] == []


def test_a_bad_file_is_one_line_exit_2_and_no_folder(importer, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question_id": "a1b2c3d4", "hypothesis": "x"}\n{"question_id": "b2"}\n')
    status, out, err = importer(str(bad), "--format", "longmemeval", "--name", "bad")
    assert status == 2
    assert (
        err.strip()
        .splitlines()[-1]
        .endswith("bad.jsonl line 2: 'hypothesis' missing (keys: ['question_id'])")
    )
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").rglob("bad"))
    status, _, err = importer(
        str(JUDGED), "--format", "longmemeval", "--name", "z", "--latency", str(JUDGED)
    )
    assert status == 2 and "--latency is for zep files" in err
