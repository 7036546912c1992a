"""The meter (issue 23.4): a dollar budget reserves each request's worst case so calls in flight
cannot overshoot together; a dry meter sends nothing and counts."""

from __future__ import annotations

import math

import pytest

from recallbench.errors import ConfigError
from recallbench.llm import PromptTask, build_llm
from recallbench.llm.budget import Budget, BudgetExceeded, Meter
from recallbench.llm.types import count_message_tokens

TASK = PromptTask(name="t", template="Say {x}", max_tokens=20, offline=lambda x: f"said {x}")
PRICE = [1000.0, 2000.0]  # USD per 1M tokens: a call costs cents, easy to count


def test_max_usd_admits_only_what_fits_even_with_calls_in_flight(stub, make_llm):
    stub.reply = lambda body: "ok"
    # 32 places: all 20 calls are in flight at once, each reserving its worst case
    llm = make_llm(cache=True, price_per_1m=PRICE, max_usd=0.5, concurrency=32)
    letters = [{"x": chr(ord("a") + i)} for i in range(20)]  # prompts of one size each
    prompt = count_message_tokens([{"role": "user", "content": "Say a"}], llm.count_tokens)
    worst = (prompt * PRICE[0] + TASK.max_tokens * PRICE[1]) / 1e6
    with pytest.raises(BudgetExceeded, match=r"max_usd=0.5 reached"):
        llm.run_many(TASK, letters)
    assert stub.requests == math.floor(0.5 / worst) < 20
    assert llm.meter.spent <= 0.5 and llm.meter.reserved == pytest.approx(0.0)
    # what was paid for is cached: the same calls now cost nothing and send nothing
    sent = stub.requests
    again = make_llm(cache=True, price_per_1m=PRICE, max_usd=0.5)
    got = again.run_many(TASK, letters[:sent])
    assert all(r.cached for r in got) and stub.requests == sent


def test_max_usd_without_a_price_is_a_config_error(stub, make_llm):
    llm = make_llm(model="my-local-model", max_usd=1.0)
    with pytest.raises(ConfigError, match="set generator.price_per_1m"):
        llm.run(TASK, x="a")
    assert stub.requests == 0


def test_max_calls_counts_requests_not_cache_hits(stub, make_llm):
    stub.reply = lambda body: "ok"
    make_llm(cache=True).run_many(TASK, [{"x": "a"}, {"x": "b"}])
    llm = make_llm(cache=True, max_calls=1)
    assert len(llm.run_many(TASK, [{"x": "a"}, {"x": "b"}, {"x": "c"}])) == 3  # 2 hits + 1
    with pytest.raises(BudgetExceeded, match="max_calls=1 reached"):
        llm.run(TASK, x="d")
    assert stub.requests == 3


def test_a_dry_meter_sends_nothing_and_counts_each_call(stub, tmp_path):
    meter = Meter(Budget(max_calls=0), dry=True)  # a plan is never stopped by the budget
    cfg = {"backend": "openai", "model": "gpt-4o-mini", "base_url": stub.base_url}
    llm = build_llm(cfg, tmp_path / "llm.sqlite", meter)
    res = llm.run_many(TASK, [{"x": "a"}, {"x": "b"}, {"x": "a"}])
    assert stub.requests == 0 and [r.raw for r in res] == ["said a", "said b", "said a"]
    row = meter.rows[("gpt-4o-mini", "t")]
    # one batch: the repeated call is sent twice, as the real batch would (no earlier batch)
    assert (row.calls, row.cached, row.repeats, row.completion_max) == (3, 0, 0, 60)
    llm.run(TASK, x="a")  # a later batch repeats it: a cache hit by then
    assert (meter.rows[("gpt-4o-mini", "t")].repeats, meter.rounds) == (1, [(3, 8), (1, 8)])
    assert meter.wall_s(2.0) == 2 * 2.0  # ceil(3/8) + ceil(1/8) latencies
    llm.close()


def test_a_batch_queued_behind_the_concurrency_bound_reserves_only_what_is_sent(stub, make_llm):
    # one place: each call reserves its worst case only when it is sent, and pays its real
    # cost ("ok": 1 token) before the next is admitted, so all 20 fit where 10 worst cases would
    stub.reply = lambda body: "ok"
    llm = make_llm(price_per_1m=PRICE, max_usd=0.5, concurrency=1)
    got = llm.run_many(TASK, [{"x": chr(ord("a") + i)} for i in range(20)])
    assert len(got) == 20 and stub.requests == 20 and llm.meter.spent < 0.5


def test_a_plan_prices_each_call_by_hand(stub, make_llm):
    # one call to send: price = prompt x 1000 + completion x 2000 USD per 1M tokens, where the
    # completion is the offline stand-in's reply ("said a") or, at most, max_tokens (20)
    meter = Meter(Budget(), dry=True)
    cfg = {"backend": "openai", "model": "m", "base_url": stub.base_url, "price_per_1m": PRICE}
    llm = build_llm(cfg, None, meter)
    llm.run(TASK, x="a")
    prompt = count_message_tokens([{"role": "user", "content": "Say a"}], llm.count_tokens)
    said = llm.count_tokens("said a")
    row = meter.rows[("m", "t")]
    assert (row.calls, row.prompt_tokens, row.completion_tokens) == (1, prompt, said)
    assert row.usd == pytest.approx((prompt * 1000 + said * 2000) / 1e6)
    assert row.usd_max == pytest.approx((prompt * 1000 + 20 * 2000) / 1e6)
    assert stub.requests == 0
    llm.close()
