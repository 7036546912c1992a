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
    return _predictions(run_dir), stub.requests, json.loads((run_dir / "usage.json").read_text())


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_stop_signal_then_resume(signum, stub, reference, tmp_path):
    ref_predictions, ref_requests, ref_usage = reference
    results, cache = tmp_path / "r", tmp_path / "c"
    stub.reset_stats()
    args = _args(stub, results, cache)
    proc = subprocess.Popen(
        [sys.executable, "-m", "recallbench.cli", *args],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 300
    while time.time() < deadline and not list(results.glob("runs/sig/*/j/items/*.jsonl")):
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signum, err

    run_dir = _run_dir(results)
    info = json.loads((run_dir / "run.json").read_text())
    assert info["status"] == "interrupted"
    assert info["signal"] == signal.Signals(signum).name
    assert 1 <= info["episodes_done"] < len({p.split(":")[0] for p, _ in ref_predictions}) + 1
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
