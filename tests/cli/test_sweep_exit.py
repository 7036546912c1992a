"""The submitting process of a sweep exits with the worst outcome of its jobs (issue 45, item 2)
under every launcher here: Hydra's basic one (jobs in this process), joblib processes
(``local_parallel``) and submitit's local executor (``submitit_local``: the SLURM code path,
pickled jobs in their own processes). SLURM itself is not here; its exit is the same
``sweep_exit`` over ``sweep.json`` (``run.sweep.worst_exit``, tested in tests/run/test_sweep.py).

A sweep over two data folders: the job whose folder is missing fails, the other is stopped by
``sweep.max_calls`` (interrupted), so the sweep exits 1 and both jobs ran to their end; with
the good folder alone it exits 75. Real job processes against the recording stub (~1 min)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from recallbench.testing.stub import StubServer

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"
BASE = [
    "-m",
    "dataset=msc",
    "memory=memory_retrieval",
    "embedder=hashing",
    "generator=openai",
    "generator.model=gpt-4o-mini",
    "episodes=1",
    "progress=false",
    "tag=t",
    "sweep.max_calls=2",  # fewer than one episode sends: every job that runs stops
]


@pytest.fixture(scope="module")
def stub():
    with StubServer(latency_s=0.02) as server:
        yield server


def _sweep(args: list[str], results: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "RECALLBENCH_DATA_DIR": str(FIXTURES), "RECALLBENCH_JOBS": "2"}
    env.pop("RECALLBENCH_STAMP", None)
    cmd = [sys.executable, "-m", "recallbench.cli", *args, f"paths.results_dir={results}"]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)


def _states(sweep: Path) -> dict[str, str]:
    jobs = json.loads((sweep / "sweep.json").read_text())["jobs"]
    return {job: entry["status"] for job, entry in sorted(jobs.items())}


@pytest.mark.parametrize("launcher", ["basic", "local_parallel", "submitit_local"])
def test_a_failed_job_makes_the_sweep_exit_1_and_the_other_jobs_still_end(launcher, stub, tmp_path):
    data = f"dataset.data_dir={FIXTURES},{tmp_path / 'missing'}"
    args = [*BASE, f"generator.base_url={stub.base_url}", data, f"hydra/launcher={launcher}"]
    done = _sweep([*args, "stamp=f"], tmp_path)
    assert done.returncode == 1, done.stderr
    states = _states(tmp_path / "runs" / "t" / "f")
    assert {("missing" in job, status) for job, status in states.items()} == {
        (True, "failed"),  # its data folder is missing
        (False, "interrupted"),  # ran until the sweep's budget stopped it
    }, done.stderr
    assert "1 job(s) of the sweep failed or died (" in done.stderr
    assert "jobs: 1 failed, 1 interrupted); fix them and resume with: recallbench -m" in done.stderr


@pytest.mark.parametrize("launcher", ["basic", "local_parallel", "submitit_local"])
def test_a_sweep_the_budget_stopped_exits_75_after_every_job_ended(launcher, stub, tmp_path):
    args = [*BASE, f"generator.base_url={stub.base_url}", "memory.k=1,2", "stamp=b"]
    done = _sweep([*args, f"hydra/launcher={launcher}"], tmp_path)
    assert done.returncode == 75, done.stderr
    # the basic launcher too runs the second job after the first stopped (each stops at once)
    assert list(_states(tmp_path / "runs" / "t" / "b").values()) == ["interrupted"] * 2
    assert "2 job(s) of the sweep stopped interrupted" in done.stderr
