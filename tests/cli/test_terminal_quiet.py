"""A run in a real terminal (a pseudo-terminal): the run folder once, wandb in one line, no faiss
warning from MAUVE's clustering."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"
SRC = Path(__file__).resolve().parents[2] / "src"


def _in_a_terminal(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=follower, stderr=follower
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # the terminal closed: the process is done writing
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    assert proc.wait(timeout=600) == 0
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(chunks).decode("utf-8", "replace"))


def test_a_run_in_a_terminal_names_its_folder_once_and_wandb_in_one_line(tmp_path):
    env = {**os.environ, "WANDB_MODE": "offline", "COLUMNS": "200"}
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    for key in ("WANDB_SILENT", "HYDRA_FULL_ERROR"):
        env.pop(key, None)
    args = [
        sys.executable,
        "-m",
        "recallbench.cli",
        "dataset=msc",
        f"dataset.data_dir={FIXTURES}",
        "memory=memory_retrieval",
        "generator=extractive",
        "embedder=hashing",
        "metrics.names=[rouge_l,mauve]",
        f"paths.results_dir={tmp_path / 'results'}",
        "progress=false",
    ]
    out = _in_a_terminal(args, tmp_path, env)
    (record,) = (tmp_path / "results" / "runs" / "adhoc").glob("*/*/run.json")
    run_dir = record.parent
    assert out.count(str(run_dir)) == 1, out
    wandb_lines = [line for line in out.splitlines() if line.startswith("wandb:")]
    assert len(wandb_lines) == 1 and "offline run in" in wandb_lines[0], out
    assert "mauve" in out and "WARNING clustering" not in out, out


def test_help_lists_choices_not_shared_parts():
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-m", "recallbench.cli", "--help"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    section = done.stdout.split("== Configuration groups ==")[1].split("== Config ==")[0]
    groups = dict(line.split(": ", 1) for line in section.splitlines() if ": " in line)
    memory = groups["memory"].split(", ")
    assert "memory_retrieval" in memory and "lufy" in memory
    assert not [m for m in memory if m.startswith("_")]  # conf/memory/_cosine_cut.yaml is a part
    assert groups["embedder"].split(", ") == sorted(
        p.stem for p in (SRC / "recallbench" / "conf" / "embedder").glob("*.yaml")
    )
    assert done.stdout.startswith("recallbench: ") and "recallbench view" in done.stdout
