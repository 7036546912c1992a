"""``run.ledger``: a sweep's ledger seen from outside its jobs (a resume, ``recallbench
status --release``) gives back what processes that are gone reserved, and only that."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from recallbench.run.ledger import release_on_resume
from recallbench.run.sweep import record_job
from recallbench.store import SqliteStore


def _dead_pid() -> int:
    """The pid of a process that has ended."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_resumed_job_gives_back_what_a_killed_attempt_reserved(tmp_path):
    sweep, dead = tmp_path / "runs" / "t" / "s", _dead_pid()
    record_job(sweep, "k1", status="running", host=platform.node(), pid=dead)
    store = SqliteStore(tmp_path / "store.sqlite")
    store.reserve("sweep:t/s", 0.4, None, 1.0, f"{platform.node()}:{dead}")  # kill -9 mid-call
    store.reserve("sweep:t/s", 0.1, None, 1.0, f"{platform.node()}:{os.getpid()}")  # alive
    line = release_on_resume(store, sweep)
    assert store.totals("sweep:t/s").reserved == pytest.approx(0.1)
    assert line == (
        f"recallbench: released $0.4000 of sweep t/s reserved by 1 process(es) that are gone "
        f"({platform.node()}:{dead})"
    )
    assert release_on_resume(store, sweep) is None  # nothing left to give back: silent


def test_a_folder_without_sweep_json_releases_nothing(tmp_path):
    store = SqliteStore(tmp_path / "store.sqlite")
    store.reserve("sweep:t/s", 0.4, None, 1.0, f"{platform.node()}:{_dead_pid()}")
    assert release_on_resume(store, tmp_path / "runs" / "t" / "s") is None
    assert store.totals("sweep:t/s").reserved == pytest.approx(0.4)  # no job record: kept
