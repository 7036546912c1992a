"""A second checkout (or worktree) with the same results reuses every finished run and the
command's record (issue 53, item 4): nothing in a record names the checkout's absolute path
(the working folder and data inside the project are relative to it, run folders relative to
the results folder), and the data inside the checkout is compared by its bytes, not by when
that checkout wrote it.

Real ``recallbench`` processes in two copies of this checkout's ``src/``, ``conf/`` and fixtures;
the command line names its folders relative to the checkout, as users type it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from recallbench.io import not_reads

ROOT = Path(__file__).resolve().parents[2]
ARGS = (
    "paths.data_dir=data/fixtures",
    "progress=false",
    "generator=extractive",
    "episodes=1",
    "embedder=hashing",
    "metrics=lexical",
    "memory=memory_retrieval",
    "hydra/job_logging=none",
    "hydra/hydra_logging=none",
)


def _checkout(where: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    with not_reads():  # copying is no input of this process's runs (tests/run/test_sources.py)
        shutil.copytree(ROOT / "src", where / "src", symlinks=True, ignore=ignore)
        shutil.copytree(ROOT / "conf", where / "conf", ignore=ignore)
        shutil.copytree(ROOT / "data" / "fixtures", where / "data" / "fixtures")
    return where


def _run(checkout: Path, stamp: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECALLBENCH_")}
    env.update(PYTHONPATH=str(checkout / "src"), RECALLBENCH_STAMP=stamp, WANDB_MODE="disabled")
    done = subprocess.run(
        [sys.executable, "-m", "recallbench.cli", *ARGS],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stderr


def _state(checkout: Path) -> tuple[list[str], list[str]]:
    """The run folders and the command records of a checkout's results."""
    results = checkout / "results"
    runs = sorted(p.parent.relative_to(results).as_posix() for p in results.rglob("run.json"))
    records = sorted(p.name for p in (results / "cache" / "commands").glob("*.json"))
    return runs, records


def test_a_second_checkout_reuses_the_runs_and_the_command_record(tmp_path):
    first = _checkout(tmp_path / "one")
    _run(first, "s1")
    runs, records = _state(first)
    assert len(runs) == 1 and len(records) == 1
    second = _checkout(tmp_path / "two")  # its files written later: other modification times
    shutil.copytree(first / "results", second / "results")
    # the command record answers: nothing composed, run or recorded again
    out = _run(second, "s2")
    assert f"reusing {Path('results') / runs[0]}" in out
    assert _state(second) == (runs, records)
    # without the record, the run rule reuses the run all the same
    shutil.rmtree(second / "results" / "cache" / "commands")
    assert "reusing" in _run(second, "s3")
    assert _state(second)[0] == runs
