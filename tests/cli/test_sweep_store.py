"""A sweep is one experiment (issue 34): one store, one budget, its state on disk.

Real processes against the recording stub and a real redis-server: 6-job sweeps under
``hydra/launcher=local_parallel`` (joblib processes) and ``submitit_local`` (submitit's local
executor: the SLURM code path, pickled jobs in separate processes) with ``sweep.max_calls``;
two jobs with identical prompts; ``kill -9`` of a job; the server stopped mid-sweep. Each runs
several sweeps of real job processes (~1-3 min on 2 cores), so they are ``slow``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from recallbench.testing.stub import StubServer

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"
BASE = [
    "dataset=msc",
    "memory=memory_retrieval",
    "embedder=hashing",
    "generator=openai",
    "generator.model=gpt-4o-mini",
    "generator.concurrency=2",
    "episodes=1",
    "progress=false",
    "tag=t",
]
SIX = "memory.k=1,2,3,4,5,6"


def _cli(args: list[str], results: Path, **popen) -> subprocess.Popen[str]:
    env = {**os.environ, "RECALLBENCH_DATA_DIR": str(FIXTURES), "RECALLBENCH_JOBS": "2"}
    env.pop("RECALLBENCH_STAMP", None)
    cmd = [sys.executable, "-m", "recallbench.cli", *args, f"paths.results_dir={results}"]
    return subprocess.Popen(
        cmd, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen
    )


def _run(args: list[str], results: Path) -> tuple[int, str]:
    proc = _cli(args, results)
    out, err = proc.communicate(timeout=900)
    return proc.returncode, out + err


def _status(sweep: Path) -> str:
    """What ``recallbench status <sweep>`` prints."""
    cmd = [sys.executable, "-m", "recallbench.cli", "status", str(sweep)]
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def _jobs(sweep: Path) -> dict[str, str]:
    return {
        p.name: json.loads((p / "run.json").read_text())["status"]
        for p in sorted(sweep.iterdir())
        if (p / "run.json").is_file()
    }


def _outputs(sweep: Path) -> dict[str, list[str]]:
    return {
        p.name: [json.loads(line)["output"] for line in (p / "predictions.jsonl").open()]
        for p in sorted(sweep.iterdir())
        if (p / "predictions.jsonl").is_file()
    }


@pytest.fixture(scope="module")
def stub():
    with StubServer(latency_s=0.05) as server:
        yield server


@pytest.fixture(scope="module")
def reference(stub, tmp_path_factory) -> tuple[dict[str, list[str]], int]:
    """The predictions of the unbudgeted 6-job sweep (its own SQLite store), and how many
    requests it sent."""
    results = tmp_path_factory.mktemp("reference")
    before = stub.requests
    status, log = _run(
        ["-m", *BASE, SIX, f"generator.base_url={stub.base_url}", "stamp=r"], results
    )
    assert status == 0, log
    return _outputs(results / "runs" / "t" / "r"), stub.requests - before


@pytest.mark.parametrize("launcher", ["local_parallel", "submitit_local"])
def test_a_sweep_budget_bounds_every_job_together_and_resumes(
    launcher, stub, reference, redis_server, tmp_path
):
    outputs, needed = reference
    n = needed // 2  # half of what the 6 jobs send together
    store = f"store={redis_server.url}"
    args = ["-m", *BASE, SIX, f"generator.base_url={stub.base_url}", store, "stamp=s"]
    args.append(f"hydra/launcher={launcher}")
    before = stub.requests
    status, log = _run([*args, f"sweep.max_calls={n}"], tmp_path)
    sent = stub.requests - before
    sweep = tmp_path / "runs" / "t" / "s"
    assert status == 75, log  # the submitting process: the worst outcome of its jobs
    # the ledger admits a request before it is sent, atomically: nothing in flight overshoots
    assert 0 < sent <= n, log
    states = _jobs(sweep)
    assert "interrupted" in states.values(), (states, log)
    assert set(states.values()) <= {"finished", "interrupted"}, (states, log)
    record = json.loads((sweep / "sweep.json").read_text())
    assert record["budget"]["max_calls"] == n
    stopped = [j for j, s in states.items() if s == "interrupted"]
    assert all(f"sweep.max_calls={n} reached" in record["jobs"][j]["reason"] for j in stopped)
    shown = _status(sweep)
    assert "interrupted" in shown and f"sweep.max_calls={n}" in shown
    assert "resume the rest with: recallbench -m" in shown and f"resume_dir={sweep}" in shown
    # resume the sweep with a raised budget: every job finishes as the unbudgeted sweep did
    status, log = _run([*args, f"sweep.max_calls={2 * needed}", f"resume_dir={sweep}"], tmp_path)
    assert status == 0, log
    assert set(_jobs(sweep).values()) == {"finished"} and len(_jobs(sweep)) == 6
    assert _outputs(sweep) == outputs
    shown = _status(sweep)
    assert "6 finished" in shown and "resume the rest" not in shown


def test_identical_prompts_are_sent_once_in_sequence_and_bounded_when_concurrent(
    stub, redis_server, tmp_path
):
    store = f"store={redis_server.url}"
    one = [*BASE, f"generator.base_url={stub.base_url}", store, "memory.k=3"]
    before = stub.requests
    assert _run([*one, "stamp=a"], tmp_path)[0] == 0
    first = stub.requests - before
    assert first > 0
    # the same job again in another sweep: every reply is a hit in the shared store
    assert _run([*one, "stamp=b"], tmp_path)[0] == 0
    assert stub.requests - before == first
    # two jobs with identical prompts at once (a key that does not change a prompt): each
    # prompt is sent at most once per job, so duplicates are at most the unique prompts
    both = [
        "-m",
        *[a for a in BASE if not a.startswith("episodes=")],
        f"generator.base_url={stub.base_url}",
        store,
        "memory.k=3",
        "episodes=2",  # an episode the first two jobs did not replay: prompts not cached yet
        "generator.timeout_s=60,61",
        "hydra/launcher=local_parallel",
        "stamp=c",
    ]
    before = stub.requests
    bodies_before = len(stub.bodies)
    status, log = _run(both, tmp_path)
    assert status == 0, log
    sent = stub.requests - before
    prompts = [json.dumps(b["messages"]) for b in list(stub.bodies)[bodies_before:]]
    unique = len(set(prompts))
    duplicates = sent - unique
    assert unique > 0 and 0 <= duplicates <= unique
    outputs = _outputs(tmp_path / "runs" / "t" / "c")
    assert len(outputs) == 2 and len({json.dumps(v) for v in outputs.values()}) == 1


def test_kill_9_then_resume_loses_nothing_and_resends_only_the_calls_in_flight(
    stub, redis_server, tmp_path
):
    store = f"store={redis_server.url}"
    job = [*BASE, f"generator.base_url={stub.base_url}", store, "memory.k=5", "episodes=2"]
    stub.reset_stats()
    stub.hold_after(6)  # the job is certainly inside a call, with work left
    proc = _cli([*job, "stamp=k", "job=j"], tmp_path)
    deadline = time.monotonic() + 300
    while stub.held == 0:
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    stub.release()
    run_dir = tmp_path / "runs" / "t" / "k" / "j"
    assert json.loads((run_dir / "run.json").read_text())["status"] == "running"
    shown = _status(run_dir.parent)
    assert "died" in shown  # its pid is gone: the record says so
    status, log = _run([*job, f"resume_dir={run_dir}"], tmp_path)
    assert status == 0, log
    bodies = [json.dumps(b["messages"]) for b in stub.bodies]
    twice = len(bodies) - len(set(bodies))
    assert twice <= 2  # generator.concurrency=2: at most the calls in flight at the kill
    assert json.loads((run_dir / "run.json").read_text())["status"] == "finished"


def test_the_server_stopped_mid_sweep_interrupts_every_job_and_a_restart_resumes(
    stub, redis_server, tmp_path
):
    store = f"store={redis_server.url}"
    args = [
        "-m",
        *BASE,
        f"generator.base_url={stub.base_url}",
        store,
        "memory.k=2,7",
        "hydra/launcher=local_parallel",
        "stamp=d",
    ]
    stub.hold_after(4)
    proc = _cli(args, tmp_path)
    deadline = time.monotonic() + 300
    while stub.held < 2:  # both jobs wait for a reply
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    redis_server.stop()
    stub.release()
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 75, err  # the submitting process: once every job ended
    assert "2 job(s) of the sweep stopped interrupted" in err
    sweep = tmp_path / "runs" / "t" / "d"
    assert set(_jobs(sweep).values()) == {"interrupted"}, err
    lines = [line for line in err.splitlines() if "unreachable" in line]
    assert len(lines) == 2 and all(
        line.startswith("recallbench: stopped: store redis://") and "resume with: " in line
        for line in lines
    )
    redis_server.start()
    status, log = _run([*args, f"resume_dir={sweep}"], tmp_path)
    assert status == 0, log
    assert set(_jobs(sweep).values()) == {"finished"}
