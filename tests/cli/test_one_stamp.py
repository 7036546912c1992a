"""One stamp per command (issue 53, item 1): ``cli.main`` chooses it once and hands it to every
check, job and the exit code. Before, the checks chose their own (``time.strftime`` again in
``cli.sweep.sweep_folder``), so when the clock's second turned between the two a budget-stopped
sweep typed without ``stamp=`` read the sweep.json of an empty folder and exited 0.

The clock here turns its second at every reading of the stamp's format, the worst case."""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

import pytest

from recallbench.testing.stub import StubServer

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"
STAMP_FORMAT = "%Y%m%d-%H%M%S"


@pytest.fixture
def ticking_clock(monkeypatch):
    """``time.strftime`` of the stamp's format gives a later second at every call."""
    real = time.strftime
    seconds = itertools.count()

    def strftime(fmt: str, *when: time.struct_time) -> str:
        if fmt == STAMP_FORMAT and not when:
            return f"20260101-0000{next(seconds):02d}"
        return real(fmt, *when)

    monkeypatch.setattr(time, "strftime", strftime)
    monkeypatch.delenv("RECALLBENCH_STAMP", raising=False)


def test_a_budget_stopped_sweep_exits_75_when_the_second_turns(
    ticking_clock, run_cli, monkeypatch, tmp_path
):
    monkeypatch.setenv("RECALLBENCH_DATA_DIR", str(FIXTURES))
    with StubServer() as stub:
        outcome = run_cli(
            "-m",
            "dataset=msc",
            "memory=memory_retrieval",
            "embedder=hashing",
            "generator=openai",
            "generator.model=gpt-4o-mini",
            f"generator.base_url={stub.base_url}",
            "episodes=1",
            "tag=t",
            "memory.k=1,2",
            "sweep.max_calls=2",  # fewer than one episode sends: both jobs stop
        )
    assert outcome.status == 75, outcome.err
    assert "2 job(s) of the sweep stopped interrupted" in outcome.err
    sweeps = list((tmp_path / "results" / "runs" / "t").iterdir())
    assert len(sweeps) == 1, sweeps  # the checks, both jobs and the exit: one folder
    jobs = json.loads((sweeps[0] / "sweep.json").read_text())["jobs"]
    assert [entry["status"] for entry in jobs.values()] == ["interrupted"] * 2
