"""SIGTERM and SIGINT leave an honest, resumable record (issue 15).

A real ``recallbench`` process (``generator=openai`` against the project's stub, with latency)
is stopped after its first finished episode. The record must say ``interrupted`` with the
counts done, the process must print one line with the resume command and exit 128 + signal; a
resume must finish with the predictions of an uninterrupted run, send no request for an episode
already done, and ``usage.json`` must add up over both attempts.
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

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"


def _args(stub: StubServer, results: Path, cache: Path) -> list[str]:
    return [
        "dataset=msc",
        "memory=no_memory",
        "generator=openai",
        f"generator.base_url={stub.base_url}",
        "generator.api_key_env=STUB_KEY",
        "generator.model=stub-model",
        "generator.concurrency=1",
        "generator.price_per_1m=[1.0,2.0]",
        f"paths.results_dir={results}",
        f"paths.cache_dir={cache}",
        "tag=sig",
        "job=j",
        "progress=false",
    ]


def _env() -> dict[str, str]:
    env = {**os.environ, "RECALLBENCH_DATA_DIR": str(FIXTURES), "STUB_KEY": "sk-stub"}
    env.pop("HYDRA_FULL_ERROR", None)
    return env


def _run_dir(results: Path) -> Path:
    return next(results.glob("runs/sig/*/j"))


def _predictions(run_dir: Path) -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in (run_dir / "predictions.jsonl").open()]
    return [(r["pred_id"], r["output"]) for r in rows]


def _start_until_an_episode_is_done(
    args: list[str], results: Path, stub: StubServer, hold: int, **popen
) -> subprocess.Popen:
    """Start ``recallbench`` and return once its first episode's items are written AND the stub
    holds one of its later requests: the run is certainly mid-run (work left, a call waiting).
    ``hold``: requests the stub answers before it holds (after the first episode's, fewer than
    the run's)."""
    stub.hold_after(hold)
    proc = subprocess.Popen([sys.executable, "-m", "recallbench.cli", *args], env=_env(), **popen)
    deadline = time.time() + 300
    while time.time() < deadline and not (
        stub.held and list(results.glob("runs/sig/*/j/items/*.jsonl"))
    ):
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    assert stub.held, "the run never reached the held request"
    return proc


def _stop(proc: subprocess.Popen, stub: StubServer, signum: int):
    """Send ``signum`` while a request is held, then open the gate for the next attempt."""
    proc.send_signal(signum)
    try:
        return proc.communicate(timeout=120)
    finally:
        stub.release()


def _mid_run(reference) -> int:
    """Requests to answer before holding one: past the first episode, well before the end."""
    _, requests, _, first_episode = reference
    assert first_episode < requests - 1, "the fixture run needs two episodes with calls"
    return (first_episode + requests) // 2


@pytest.fixture(scope="module")
def stub():
    with StubServer(latency_s=0.15) as server:
        yield server


@pytest.fixture(scope="module")
def reference(stub, tmp_path_factory):
    """An uninterrupted run: its predictions and how many requests it sent."""
    tmp = tmp_path_factory.mktemp("ref")
    stub.reset_stats()
    cmd = [sys.executable, "-m", "recallbench.cli", *_args(stub, tmp / "r", tmp / "c")]
    proc = subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    run_dir = _run_dir(tmp / "r")
    usage = json.loads((run_dir / "usage.json").read_text())
    predictions = _predictions(run_dir)
    first = predictions[0][0].split(":")[0]
    first_episode_calls = sum(p.split(":")[0] == first for p, _ in predictions)
    return predictions, stub.requests, usage, first_episode_calls


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_stop_signal_then_resume(signum, stub, reference, tmp_path):
    ref_predictions, ref_requests, ref_usage, _ = reference
    results, cache = tmp_path / "r", tmp_path / "c"
    stub.reset_stats()
    args = _args(stub, results, cache)
    proc = _start_until_an_episode_is_done(
        args, results, stub, _mid_run(reference), stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = _stop(proc, stub, signum)
    err = err.decode()
    assert proc.returncode == 128 + signum, err

    run_dir = _run_dir(results)
    info = json.loads((run_dir / "run.json").read_text())
    assert info["status"] == "interrupted"
    assert info["signal"] == signal.Signals(signum).name
    assert 1 <= info["episodes_done"] < len({p.split(":")[0] for p, _ in ref_predictions})
    lines = [ln for ln in err.splitlines() if ln.startswith("recallbench")]
    assert len(lines) == 1 and "resume with: recallbench " in lines[0], err
    assert f"resume_dir={run_dir}" in lines[0]
    assert "Traceback" not in err
    first_requests = stub.requests

    proc = subprocess.run(
        [sys.executable, "-m", "recallbench.cli", *args, f"resume_dir={run_dir}"],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    info = json.loads((run_dir / "run.json").read_text())
    assert info["status"] == "finished" and info["attempt"] == 2
    assert _predictions(run_dir) == ref_predictions
    # at most the one call in flight when the signal came is sent twice
    assert ref_requests <= stub.requests <= ref_requests + 1, (first_requests, stub.requests)

    usage = json.loads((run_dir / "usage.json").read_text())
    attempts = [json.loads(p.read_text()) for p in sorted((run_dir / "usage").glob("*.json"))]
    assert len(attempts) == 2 == len(usage["attempts"])
    for key in ("calls", "prompt_tokens", "completion_tokens"):
        assert usage["totals"][key] == sum(a["totals"][key] for a in attempts)
    assert usage["totals"]["cost_usd"] == pytest.approx(
        sum(a["totals"]["cost_usd"] for a in attempts)
    )
    # what was paid over both attempts is what the uninterrupted run paid (+ a repeated call)
    assert usage["totals"]["cost_usd"] >= ref_usage["totals"]["cost_usd"] - 1e-9
    # every request is accounted for, except the one the signal cut off before it returned
    sent = usage["totals"]["calls"] - usage["totals"]["cached_calls"]
    assert stub.requests - 1 <= sent <= stub.requests


def test_kill_9_then_resume_repeats_at_most_the_call_in_flight(stub, reference, tmp_path):
    """``kill -9`` gives no chance to write anything: the record stays ``running`` and is stale;
    a resume finishes from the finished items and the LLM cache with the reference predictions."""
    from recallbench.run.record import is_stale

    ref_predictions, ref_requests, _, _ = reference
    results, cache = tmp_path / "r", tmp_path / "c"
    stub.reset_stats()
    args = _args(stub, results, cache)
    proc = _start_until_an_episode_is_done(
        args,
        results,
        stub,
        _mid_run(reference),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _stop(proc, stub, signal.SIGKILL)
    assert proc.wait(timeout=60) == -signal.SIGKILL

    run_dir = _run_dir(results)
    info = json.loads((run_dir / "run.json").read_text())
    assert info["status"] == "running" and is_stale(info)

    proc = subprocess.run(
        [sys.executable, "-m", "recallbench.cli", *args, f"resume_dir={run_dir}"],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads((run_dir / "run.json").read_text())["status"] == "finished"
    assert _predictions(run_dir) == ref_predictions
    assert ref_requests <= stub.requests <= ref_requests + 1


def test_scripted_faults_are_retried_into_the_fault_free_predictions(stub, reference, tmp_path):
    """20% of requests fail (500, 503, 429 with Retry-After, a stall past ``timeout_s``): the run
    retries them and ends ``finished`` with exactly the predictions of a fault-free run."""
    from recallbench.testing.stub import Fault

    ref_predictions, ref_requests, _, _ = reference
    faults = [Fault(500), Fault(503), Fault(429, retry_after=0.2), Fault(stall_s=3.0)]
    stub.reset_stats()
    stub.fault_rate(0.2, faults, seed=7)
    try:
        args = [*_args(stub, tmp_path / "r", tmp_path / "c"), "generator.timeout_s=1.5"]
        proc = subprocess.run(
            [sys.executable, "-m", "recallbench.cli", *args],
            env=_env(),
            capture_output=True,
            text=True,
            timeout=600,
        )
    finally:
        stub.fault_rate(0, [])
    assert proc.returncode == 0, proc.stderr
    run_dir = _run_dir(tmp_path / "r")
    info = json.loads((run_dir / "run.json").read_text())
    assert info["status"] == "finished"
    assert _predictions(run_dir) == ref_predictions
    assert stub.requests > ref_requests  # the faults were really sent and retried
    usage = json.loads((run_dir / "usage.json").read_text())
    assert usage["totals"]["calls"] - usage["totals"]["cached_calls"] == ref_requests
