"""The LM score cache: keys, a file shared by processes, and hits counted (real SmolLM2)."""

from __future__ import annotations

import multiprocessing
import sqlite3

import pytest

from recallbench import meter
from recallbench.llm import lm_scores
from recallbench.llm.backends.hf import model_identity
from recallbench.llm.lm_scores import CausalLM, score_pairs, use_score_cache
from recallbench.llm.perplexity import DEFAULT_LM, causal_lm, load_default_lm
from recallbench.llm.score_cache import ScoreCache, model_key, pair_key
from recallbench.store import SqliteStore

WORKERS = 6


def test_keys_cover_model_revision_dtype_context_and_text():
    base = {"model": "m", "revision": "abc", "dtype": "float32"}
    keys = {
        model_key(base),
        model_key({**base, "revision": "abd"}),
        model_key({**base, "dtype": "bfloat16"}),
        model_key({**base, "quantization": {"bits": 4}}),
        model_key({**base, "model": "n"}),
    }
    assert len(keys) == 5 and model_key(dict(reversed(base.items()))) == model_key(base)
    # the context is not concatenated into the text: ("a", "bc") and ("ab", "c") differ
    assert len({pair_key("a", "bc"), pair_key("ab", "c"), pair_key("bc", "a")}) == 3
    assert pair_key(None, "x") == pair_key("", "x") != pair_key(" ", "x")


def test_embedded_model_identity_names_the_gguf_without_loading_it():
    ident = model_identity(DEFAULT_LM)
    assert ident["gguf"].endswith("Q4_1.gguf") and ident["bytes"] > 10_000_000
    assert ident["dtype"] == "float32" and model_identity("smollm2") == ident


def test_values_round_trip_bit_for_bit(tmp_path):
    cache = ScoreCache(tmp_path / "s.sqlite")
    value = (12.345678901234567, 7)
    cache.put_many("m1", {("ctx", "text"): value, (None, "alone"): (0.1 + 0.2, 3)})
    assert cache.get_many("m1", [("ctx", "text"), ("", "alone"), ("x", "y")]) == {
        ("ctx", "text"): value,
        ("", "alone"): (0.1 + 0.2, 3),
    }
    assert cache.get_many("m2", [("ctx", "text")]) == {}  # another model key: a miss
    cache.close()
    con = sqlite3.connect(tmp_path / "s.sqlite")
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def _open_together(path: str, worker: int, barrier, failures) -> None:
    try:
        barrier.wait(60)
        cache = ScoreCache(path)
        cache.put_many("m", {(f"c{worker}", f"t{i}"): (float(worker), i) for i in range(50)})
        cache.get_many("m", [("c0", "t0")])
        cache.close()
    except Exception as exc:  # report every failure
        failures.put(f"worker {worker}: {exc!r}")


def test_processes_opening_one_new_file_at_once_all_write(tmp_path):
    path = str(tmp_path / "lm_scores.sqlite")
    ctx = multiprocessing.get_context("spawn")
    barrier, failures = ctx.Barrier(WORKERS), ctx.Queue()
    procs = [
        ctx.Process(target=_open_together, args=(path, w, barrier, failures))
        for w in range(WORKERS)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    seen = []
    while not failures.empty():
        seen.append(failures.get())
    assert seen == [] and [p.exitcode for p in procs] == [0] * WORKERS
    cache = ScoreCache(path)
    assert len(cache) == WORKERS * 50
    assert cache.get_many("m", [("c3", "t7")]) == {("c3", "t7"): (3.0, 7)}


def test_scores_come_from_memory_then_disk_and_the_model_loads_only_on_a_miss(tmp_path):
    texts = ["I adopted a cat named Miso.", "Yes.", "", "I adopted a cat named Miso."]
    contexts = ["Any news?", "Coffee?", "Hi", "Any news?"]
    disk = ScoreCache(tmp_path / "lm.sqlite")
    before = meter.snapshot()
    first = score_pairs(causal_lm(), texts, contexts, cache=disk)
    counts = meter.delta(before)["lm_scores"]
    assert first[2] == (0.0, 0) and first[0] == first[3] and first[0][1] > 0
    assert counts["requested"] == 2 and counts["computed"] == 2  # distinct non-empty pairs
    # a fresh process (memory cleared, a handle not loaded yet) reads the disk, loads nothing
    lm_scores.clear_memory()
    fresh = CausalLM("SmolLM2", model_identity(DEFAULT_LM), DEFAULT_LM)
    before = meter.snapshot()
    assert score_pairs(fresh, texts, contexts, cache=disk) == first
    counts = meter.delta(before)["lm_scores"]
    assert counts["disk_hits"] == 2 and counts.get("computed", 0) == 0 and fresh._loaded is None
    before = meter.snapshot()
    assert score_pairs(fresh, texts[:2], contexts[:2], cache=disk) == first[:2]
    assert meter.delta(before)["lm_scores"]["memory_hits"] == 2
    # the same weights passed as an object are another key (their identity is read from them)
    model, tok = load_default_lm()
    assert CausalLM.of(model, tok).key != fresh.key


def test_process_default_cache_is_what_perplexity_uses(tmp_path):
    from recallbench.llm.perplexity import perplexity

    try:
        disk = use_score_cache(tmp_path / "lm_scores.sqlite")
        assert lm_scores.default_score_cache() is disk
        value = perplexity(["A text nobody scored before in this test run, surely."])
        assert len(disk) == 1 and value[0] > 1
        assert use_score_cache(tmp_path / "lm_scores.sqlite") is disk  # one connection per file
    finally:
        use_score_cache(None)
    assert lm_scores.default_score_cache() is None


def test_a_store_value_that_is_not_a_score_is_an_error_naming_where(tmp_path):
    store = SqliteStore(tmp_path / "store.sqlite")
    cache = ScoreCache(tmp_path / "unused.sqlite", store=store)
    cache.put_many("m", {("ctx", "good"): (1.5, 3)})
    store.put_many("lm:m", {pair_key("ctx", "bad"): {"nll": 1.0}})
    assert cache.get_many("m", [("ctx", "good")]) == {("ctx", "good"): (1.5, 3)}
    with pytest.raises(ValueError, match=r"store.sqlite lm:m \w+: corrupt score: expected"):
        cache.get_many("m", [("ctx", "good"), ("ctx", "bad")])
    store.close()
