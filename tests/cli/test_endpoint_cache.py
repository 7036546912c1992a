"""A run against a dead endpoint fails instead of finishing from another server's cached
replies (issue 23.3: the endpoint is part of a cached reply's identity)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from recallbench.testing.stub import StubServer

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"


def _dead_url() -> str:
    with socket.socket() as sock:  # a port nobody listens on once the socket is closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_a_run_against_a_dead_endpoint_fails_instead_of_finishing_from_the_cache(
    run_cli, monkeypatch, tmp_path
):
    """The measured bug: a dead base_url with a model name cached from another server ended
    ``finished`` with cache hits and exit 0."""
    monkeypatch.setenv("RECALLBENCH_DATA_DIR", str(FIXTURES))
    monkeypatch.setenv("STUB_KEY", "sk-stub")
    args = ["memory=memory_retrieval", "dataset=msc", "episodes=1", "generator=openai"]
    args += ["generator.api_key_env=STUB_KEY", "generator.model=default", "tag=t"]
    args += ["generator.max_retries=0", "generator.timeout_s=2"]
    with StubServer() as stub:
        monkeypatch.setenv("RECALLBENCH_STAMP", "alive")
        assert run_cli(*args, f"generator.base_url={stub.base_url}", "job=j").status == 0
    monkeypatch.setenv("RECALLBENCH_STAMP", "dead")
    outcome = run_cli(*args, f"generator.base_url={_dead_url()}", "job=j")
    assert outcome.status == 2 and "failed 5 calls in a row" in outcome.err
    run_dir = tmp_path / "results" / "runs" / "t" / "dead" / "j"
    assert json.loads((run_dir / "run.json").read_text())["status"] == "failed"
    usage = json.loads((run_dir / "usage.json").read_text())["totals"]
    assert usage["cached_calls"] == 0


def test_a_structured_run_says_so_in_run_json_and_the_table_header(run_cli, monkeypatch, tmp_path):
    from recallbench.analysis import find_runs
    from recallbench.tables.engine import header_for

    monkeypatch.setenv("RECALLBENCH_DATA_DIR", str(FIXTURES))
    monkeypatch.setenv("STUB_KEY", "sk-stub")
    monkeypatch.setenv("RECALLBENCH_STAMP", "s")
    with StubServer(owned_by="vllm") as stub:
        args = ["memory=theanine", "dataset=msc", "episodes=1", "generator=openai", "tag=t"]
        args += ["generator.api_key_env=STUB_KEY", "generator.model=m", "job=j"]
        args += [f"generator.base_url={stub.base_url}", "generator.structured=auto"]
        assert run_cli(*args, "protocol.target_sessions=[3]").status == 0
        linking = [b for b in stub.bodies if "structured_outputs" in b]
        assert linking and all("regex" in b["structured_outputs"] for b in linking)
    info = json.loads((tmp_path / "results/runs/t/s/j/run.json").read_text())
    assert info["generator"]["structured"] == "vllm"  # auto, resolved from the endpoint
    header = header_for(find_runs(tmp_path / "results", "t"))
    assert header["generator"] == (
        "openai:m (structured outputs: vllm; a deviation from the papers' free-text replies)"
    )
