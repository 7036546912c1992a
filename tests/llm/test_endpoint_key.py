"""The endpoint is part of a reply's identity (issue 23.3): two servers never share cached replies
unless they are put in one ``cache_scope`` on purpose, and a dead ``base_url`` finds nothing."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from recallbench.errors import EndpointDown
from recallbench.llm import PromptTask, build_llm
from recallbench.testing.stub import StubServer

TASK = PromptTask(name="t", template="Say {x}", max_tokens=8)


def dead_url() -> str:
    with socket.socket() as sock:  # a port nobody listens on once the socket is closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _llm(base_url: str, cache: Path, **extra: object):
    cfg = {"backend": "openai", "model": "default", "base_url": base_url, "max_retries": 0}
    return build_llm({**cfg, "timeout_s": 2, **extra}, cache)


def test_two_servers_with_one_model_name_keep_their_own_replies(tmp_path):
    cache = tmp_path / "llm.sqlite"
    with StubServer(reply=lambda b: "from A") as a, StubServer(reply=lambda b: "from B") as b:
        with _llm(a.base_url, cache) as on_a, _llm(b.base_url, cache) as on_b:
            assert on_a.run(TASK, x="1").value == "from A"
            got = on_b.run(TASK, x="1")
            assert got.value == "from B" and not got.cached and b.requests == 1
            # a trailing slash names the same endpoint
            with _llm(a.base_url + "/", cache) as again:
                assert again.run(TASK, x="1").cached


def test_a_dead_endpoint_finds_nothing_another_server_answered(tmp_path):
    cache = tmp_path / "llm.sqlite"
    with StubServer(reply=lambda b: "alive") as a, _llm(a.base_url, cache) as on_a:
        on_a.run_many(TASK, [{"x": str(i)} for i in range(6)])
    with _llm(dead_url(), cache) as dead:
        with pytest.raises(EndpointDown):
            dead.run_many(TASK, [{"x": str(i)} for i in range(6)])
        totals = dead.usage.to_dict()["totals"]
        assert totals["cached_calls"] == 0 and totals["failures"] >= 5  # the breaker opened


def test_a_cache_scope_shares_replies_between_endpoints_on_purpose(tmp_path):
    cache = tmp_path / "llm.sqlite"
    with StubServer(reply=lambda b: "replica 1") as a, StubServer(reply=lambda b: "2") as b:
        with _llm(a.base_url, cache, cache_scope="smollm2-q4") as on_a:
            on_a.run(TASK, x="1")
            assert on_a.describe()["cache_scope"] == "smollm2-q4"
        with _llm(b.base_url, cache, cache_scope="smollm2-q4") as on_b:
            got = on_b.run(TASK, x="1")
        assert got.cached and got.value == "replica 1" and b.requests == 0
        with _llm(b.base_url, cache) as unscoped:  # no scope: the endpoint's own replies
            assert unscoped.run(TASK, x="1").value == "2"


def test_the_breaker_names_its_limit_even_when_calls_in_flight_fail_meanwhile():
    """Seen in `make test`: 'failed 6 calls in a row' where the test expected 5, because a call
    on another thread failed between the opening failure and its message."""
    from recallbench.llm.calls import CircuitBreaker

    breaker = CircuitBreaker(after=5)
    for _ in range(4):
        breaker.failure("refused")
    breaker.in_a_row += 1  # a concurrent call has counted its failure, not yet checked
    with pytest.raises(EndpointDown, match="failed 5 calls in a row"):
        breaker.failure("refused")
    assert breaker.in_a_row == 6
    breaker.success()
    assert not breaker.open
