"""Concurrent replay gives the serial run's results; a dead endpoint stops a run (issue 10).

``workers`` episodes replay at once through one shared LLM client. Whatever ``workers`` is, the
predictions, their order in ``predictions.jsonl``, every episode's items and memory snapshots and
the summary are those of ``workers=1``. A run against an endpoint that answers nothing ends
within seconds (the circuit breaker), records ``failed`` and exits non-zero.
"""

from __future__ import annotations

import json
import re
import socket
import time
from pathlib import Path

import pytest

from recallbench.testing.stub import StubServer

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"


@pytest.fixture(scope="module")
def stub():
    with StubServer(latency_s=0.01) as server:
        yield server


def _openai(stub: StubServer) -> tuple[str, ...]:
    return (
        "generator=openai",
        f"generator.base_url={stub.base_url}",
        "generator.api_key_env=STUB_KEY",
        "generator.model=stub-model",
        "generator.concurrency=8",
    )


def _files(run_dir: Path) -> dict[str, object]:
    """What a run wrote that must not depend on ``workers`` (timings dropped)."""
    rows = [json.loads(line) for line in (run_dir / "predictions.jsonl").open()]
    drop = ("usage", "meta")
    summary = json.loads((run_dir / "summary.json").read_text())
    return {
        "predictions": [{k: v for k, v in r.items() if k not in drop} for r in rows],
        "items": {
            p.name: [json.loads(line)["pred_id"] for line in p.open()]
            for p in sorted((run_dir / "items").glob("*.jsonl"))
        },
        "memory": {p.name: p.read_text() for p in sorted((run_dir / "memory").glob("*.jsonl"))},
        "summary": {k: v["value"] for k, v in summary["metrics"].items()},
    }


CASES = {
    "memory_retrieval-openai": ("memory=memory_retrieval", "dataset=msc"),
    "theanine-openai": ("memory=theanine", "dataset=msc"),
    "lufy_qa-extractive": (
        "experiment=lufy_table11",
        "lufy_pair=lufy",
        "generator=extractive",
        "judge=lexical",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_concurrent_replay_equals_serial(case, run_cli, stub, monkeypatch, tmp_path):
    monkeypatch.setenv("RECALLBENCH_DATA_DIR", str(FIXTURES))
    monkeypatch.setenv("STUB_KEY", "sk-stub")
    args = [*CASES[case], *(() if case.endswith("extractive") else _openai(stub))]
    got = {}
    for workers in (1, 3):
        monkeypatch.setenv("RECALLBENCH_STAMP", f"w{workers}")
        outcome = run_cli(*args, f"workers={workers}", "job=j", "tag=t")
        assert outcome.status == 0, outcome.err
        run_dir = tmp_path / "results" / "runs" / "t" / f"w{workers}" / "j"
        got[workers] = _files(run_dir)
        # the stub's echo replies do not parse as THEANINE's structured tasks: degraded
        got[workers]["status"] = json.loads((run_dir / "run.json").read_text())["status"]
    assert got[1]["status"] in ("finished", "degraded")
    assert len(got[1]["items"]) >= 2  # several episodes really ran side by side
    assert got[3] == got[1]


def test_workers_must_be_auto_or_a_positive_integer(run_cli, monkeypatch):
    monkeypatch.setenv("RECALLBENCH_DATA_DIR", str(FIXTURES))
    outcome = run_cli("generator=extractive", "workers=0")
    assert outcome.status == 2
    assert "workers=0: expected auto or an integer >= 1" in outcome.error_lines[0]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_dead_endpoint_stops_the_run_within_a_minute(run_cli, monkeypatch, tmp_path):
    monkeypatch.setenv("RECALLBENCH_DATA_DIR", str(FIXTURES))
    monkeypatch.setenv("STUB_KEY", "sk-stub")
    monkeypatch.setenv("RECALLBENCH_STAMP", "dead")
    port = _closed_port()  # nothing listens: every request is refused
    started = time.monotonic()
    outcome = run_cli(
        "memory=memory_retrieval",
        "dataset=msc",
        "generator=openai",
        f"generator.base_url=http://127.0.0.1:{port}/v1",
        "generator.api_key_env=STUB_KEY",
        "generator.model=stub-model",
        "generator.max_retries=2",
        "job=j",
    )
    elapsed = time.monotonic() - started
    assert outcome.status == 2, outcome.err
    assert elapsed < 60, elapsed
    (line,) = outcome.error_lines
    in_a_row = re.search(r"failed (\d+) calls in a row", line)
    run_dir = tmp_path / "results" / "runs" / "adhoc" / "dead" / "j"
    assert in_a_row and int(in_a_row.group(1)) >= 5 and f"resume_dir={run_dir}" in line
    assert "Traceback" not in outcome.err
    info = json.loads((run_dir / "run.json").read_text())
    assert info["status"] == "failed" and "EndpointDown" in info["error"]
    assert not (run_dir / "summary.json").exists()  # failed calls are never scored
