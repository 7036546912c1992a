"""The openai backend end to end against the local stub: replies, retries, bounds, limits."""

from __future__ import annotations

import threading
import time

import pytest

from recallbench.errors import ConfigError
from recallbench.llm import CALL_FAILURE, PromptTask
from recallbench.llm.types import count_message_tokens
from recallbench.testing.stub import Fault, hash_vector

ECHO = PromptTask(
    name="echo", template="Say {x}", offline=lambda x: f"offline {x}", stage="memory", max_tokens=32
)


def test_end_to_end_reply_tokens_and_request(stub, make_llm):
    llm = make_llm()
    res = llm.run(ECHO, x="hello there")
    assert res.failure is None and res.parsed and not res.cached
    assert res.value.startswith("echo ") and res.value.endswith(": Say hello there")
    assert (res.prompt_tokens, res.completion_tokens) == (3 + 4, 5)  # the server's own counts
    body = stub.bodies[-1]
    assert body["model"] == "gpt-4o-mini" and body["max_tokens"] == 32
    assert body["messages"] == [{"role": "user", "content": "Say hello there"}]
    assert body["temperature"] == 0.0 and "seed" not in body
    assert llm.backend.name == "openai" and llm.model == "gpt-4o-mini"


def test_run_many_keeps_order_and_chat_strips(stub, make_llm):
    llm = make_llm()
    out = llm.run_many(ECHO, [{"x": f"item{i}"} for i in range(25)])
    assert [r.value.split(": ")[1] for r in out] == [f"Say item{i}" for i in range(25)]
    stub.reply = lambda body: "  padded reply \n"
    res = llm.chat(
        [{"role": "user", "content": "hi"}],
        name="response",
        stage="answer",
        offline=lambda: "unused",
        max_tokens=7,
        seed=3,
    )
    assert res.value == "padded reply" and stub.bodies[-1]["seed"] == 3
    assert llm.usage.to_dict()["tasks"]["response"]["calls"] == 1


def test_429_with_retry_after_is_retried_honouring_the_header(stub, make_llm):
    llm = make_llm()
    stub.push_faults(Fault(429, retry_after=1.0))
    start = time.perf_counter()
    res = llm.run(ECHO, x="a")
    elapsed = time.perf_counter() - start
    assert res.failure is None and stub.requests == 2
    # The client's own first backoff is 0.375-0.5 s; waiting the header's 1 s means it was
    # honoured. A lower bound only: a loaded machine can make a wait longer, never shorter.
    assert elapsed >= 0.95


def test_500_and_timeout_are_retried_then_succeed(stub, make_llm):
    llm = make_llm(timeout_s=0.3)
    stub.push_faults(Fault(500), Fault(stall_s=1.0))
    res = llm.run(ECHO, x="b")
    assert res.failure is None and res.value.endswith("Say b")
    assert stub.requests == 3
    assert llm.usage.to_dict()["totals"]["failures"] == 0


def test_gives_up_after_the_bound_with_a_counted_failure(stub, make_llm):
    bad = PromptTask(name="judge", template="{x}", parse=int, fallback=-1, stage="judge")
    llm = make_llm(max_retries=2)
    stub.always = Fault(503, retry_after=0.01)
    res = llm.run(bad, x="q")
    assert stub.requests == 3  # one try + max_retries
    assert res.value == -1 and res.failure.startswith(CALL_FAILURE) and "503" in res.failure
    assert not res.parsed and res.raw == ""
    stub.always = None
    stub.reply = lambda body: "42"
    assert llm.run(bad, x="q").value == 42  # the run goes on
    judge = llm.usage.to_dict()["by_stage"]["judge"]
    assert (judge["calls"], judge["failures"], judge["parse_failures"]) == (2, 1, 0)


def test_malformed_reply_and_bad_request_are_counted_failures(stub, make_llm):
    llm = make_llm()
    stub.push_faults(Fault(200, body={"object": "chat.completion", "choices": []}), Fault(400))
    out = llm.run_many(ECHO, [{"x": 1}, {"x": 2}])
    assert all(r.failure and r.failure.startswith(CALL_FAILURE) for r in out)
    assert {"malformed" in r.failure or "BadRequestError 400" in r.failure for r in out} == {True}
    assert stub.requests == 2 and llm.usage.to_dict()["totals"]["failures"] == 2


@pytest.mark.parametrize("concurrency", [4, 16])
def test_concurrency_bound_is_respected_and_used(stub, make_llm, concurrency):
    """The stub holds every request until the bound is reached: reaching it is certain, not a
    matter of timing, and the bound is never exceeded while requests wait."""
    llm = make_llm(concurrency=concurrency)
    stub.hold_after(0)
    batch = threading.Thread(target=llm.run_many, args=(ECHO, [{"x": i} for i in range(24)]))
    batch.start()
    try:
        deadline = time.monotonic() + 30
        while stub.held < concurrency and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)  # a client without the bound would send more now
        assert stub.held == concurrency == stub.max_in_flight
    finally:
        stub.release()
        batch.join(60)
    assert stub.requests == 24 and stub.max_in_flight == concurrency


def test_requests_per_minute_limit_slows_a_burst(stub, make_llm):
    llm = make_llm(rpm=1200, concurrency=32)  # 20/s, bucket of 1 s = 20 requests
    start = time.perf_counter()
    llm.run_many(ECHO, [{"x": i} for i in range(30)])
    assert time.perf_counter() - start >= 0.45  # 10 requests past the bucket at 20/s


def test_tokens_per_minute_limit_slows_a_burst(stub, make_llm):
    llm = make_llm(tpm=12000, concurrency=32)  # 200 tokens/s, a bucket of 200
    each = count_message_tokens(ECHO.render(x=0), llm.count_tokens) + ECHO.max_tokens
    assert 32 + 7 < each < 32 + 15  # prompt estimate: text + 4 per message + 3 reply priming
    start = time.perf_counter()
    llm.run_many(ECHO, [{"x": i} for i in range(8)])
    assert time.perf_counter() - start >= (8 * each - 200) / 200 * 0.95


def test_auth_error_raises_config_error_without_the_key(stub, make_llm, monkeypatch):
    monkeypatch.setenv("RB_TEST_KEY", "sk-test-SECRETSECRETSECRET")
    llm = make_llm(api_key_env="RB_TEST_KEY")
    stub.push_faults(Fault(401))
    with pytest.raises(ConfigError, match="AuthenticationError 401") as info:
        llm.run(ECHO, x="a")
    assert "SECRETSECRET" not in str(info.value) and stub.requests == 1


def test_embeddings_endpoint_is_deterministic_unit_vectors(stub):
    import openai

    client = openai.OpenAI(api_key="x", base_url=stub.base_url, max_retries=0)
    try:
        a = client.embeddings.create(model="text-embedding-3-small", input=["cat", "dog"])
        b = client.embeddings.create(model="text-embedding-3-small", input="cat", dimensions=8)
    finally:
        client.close()
    va, vb = a.data[0].embedding, a.data[1].embedding
    assert len(va) == 64 and abs(sum(v * v for v in va) - 1) < 1e-9 and va != vb
    assert va == hash_vector("cat", 64)  # deterministic: a hash of the text
    assert len(b.data[0].embedding) == 8 and a.usage.prompt_tokens == 2
