"""The SQLite reply cache: reruns make no calls; sampling rules; keys; parallel writers."""

from __future__ import annotations

import dataclasses
import multiprocessing
import sqlite3

import pytest

from recallbench.llm import Cache, PromptTask, cache_key
from recallbench.llm.cache import cached_reply

ECHO = PromptTask(name="echo", template="Say {x}", offline=lambda x: x, stage="answer")
SAMPLED = dataclasses.replace(ECHO, name="sampled", temperature=0.7)


def test_second_run_makes_no_calls_and_returns_identical_outputs(stub, make_llm):
    fields = [{"x": f"turn {i}"} for i in range(12)]
    first = make_llm(cache=True)
    out1 = first.run_many(ECHO, fields)
    first.close()
    assert stub.requests == 12
    second = make_llm(cache=True)  # a new process would open the same file
    out2 = second.run_many(ECHO, fields)
    assert stub.requests == 12  # no new request reached the server
    assert [r.raw for r in out2] == [r.raw for r in out1]
    assert all(r.cached and r.cost_usd == 0.0 for r in out2)
    totals = second.usage.to_dict()["totals"]
    assert totals["calls"] == totals["cached_calls"] == 12
    assert totals["cost_usd"] == 0.0 and totals["cost_usd_without_cache"] > 0
    assert totals["prompt_tokens"] == sum(r.prompt_tokens for r in out1)


def test_unseeded_sampled_calls_are_never_cached(stub, make_llm):
    llm = make_llm(cache=True)
    a = llm.run(SAMPLED, x="same")
    b = llm.run(SAMPLED, x="same")
    assert stub.requests == 2 and not b.cached and a.raw != b.raw  # the stub samples a nonce
    assert len(llm.cache) == 0


def test_seeded_sampled_calls_are_cached_per_seed(stub, make_llm):
    llm = make_llm(cache=True)
    seeded = dataclasses.replace(SAMPLED, seed=7)
    a = llm.run(seeded, x="same")
    b = llm.run(seeded, x="same")
    c = llm.run(dataclasses.replace(seeded, seed=8), x="same")
    assert stub.requests == 2 and b.cached and b.raw == a.raw and not c.cached
    # The generator-wide seed seeds calls that give none, so they are cached too.
    default_seeded = make_llm(cache=True, seed=11)
    default_seeded.run(SAMPLED, x="other")
    assert default_seeded.run(SAMPLED, x="other").cached and stub.bodies[-1]["seed"] == 11


def test_key_covers_backend_model_messages_and_every_decoding_parameter():
    msgs = [{"role": "user", "content": "hi"}]
    base = cache_key("openai", "gpt-4o", msgs, {"max_tokens": 5, "temperature": 0.0, "seed": None})
    variants = [
        cache_key("hf", "gpt-4o", msgs, {"max_tokens": 5, "temperature": 0.0, "seed": None}),
        cache_key("openai", "gpt-4", msgs, {"max_tokens": 5, "temperature": 0.0, "seed": None}),
        cache_key(
            "openai",
            "gpt-4o",
            [{"role": "system", "content": "hi"}],
            {"max_tokens": 5, "temperature": 0.0, "seed": None},
        ),
        cache_key("openai", "gpt-4o", msgs, {"max_tokens": 6, "temperature": 0.0, "seed": None}),
        cache_key("openai", "gpt-4o", msgs, {"max_tokens": 5, "temperature": 0.1, "seed": None}),
        cache_key("openai", "gpt-4o", msgs, {"max_tokens": 5, "temperature": 0.0, "seed": 0}),
    ]
    assert len({base, *variants}) == 7 and len(base) == 64
    same_order = cache_key(
        "openai", "gpt-4o", msgs, {"seed": None, "temperature": 0.0, "max_tokens": 5}
    )
    assert same_order == base


def test_cache_is_wal_json_and_not_pickle(tmp_path):
    cache = Cache(tmp_path / "c.sqlite")
    cache.put("k", {"text": "héllo", "prompt_tokens": 3, "completion_tokens": 1})
    assert cache.get("k")["text"] == "héllo" and cache.get("missing") is None
    cache.close()
    con = sqlite3.connect(tmp_path / "c.sqlite")
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    raw = con.execute("SELECT value FROM replies").fetchone()[0]
    assert isinstance(raw, str) and raw.startswith("{")


def _writer(path: str, worker: int, n: int) -> None:
    cache = Cache(path)
    for i in range(n):
        cache.put(f"{worker}-{i}", {"text": f"w{worker} {i}"})
        cache.get(f"{(worker + 1) % 3}-{i}")
    cache.close()


def test_parallel_processes_write_one_file_safely(tmp_path):
    path = str(tmp_path / "shared.sqlite")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, w, 150)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    cache = Cache(path)
    assert len(cache) == 450 and cache.get("2-149") == {"text": "w2 149"}


def test_a_cached_value_that_is_not_a_reply_is_an_error_naming_where():
    reply = {"text": "a", "prompt_tokens": 2, "completion_tokens": 1}
    assert cached_reply(reply, "x") == reply  # an older cache without "model" still reads
    assert cached_reply({**reply, "model": "m", "cost": 0.1}, "x") == {**reply, "model": "m"}
    for bad in ({"text": "a", "prompt_tokens": "2", "completion_tokens": 1}, ["a", 2, 1], "a"):
        with pytest.raises(ValueError, match=r"^c.sqlite k1: corrupt cached reply: expected"):
            cached_reply(bad, "c.sqlite k1")
