"""Embedders: shapes, normalization, similarity, caching, configs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from omegaconf import OmegaConf

from recallbench.cli.build import BY_NAME, build_embedder
from recallbench.embed import EmbeddingCache, HashingEmbedder
from recallbench.embed.hashing import features
from recallbench.errors import ConfigError

CONF = Path(__file__).resolve().parents[2] / "conf" / "embedder"

TEXTS = [
    "I adopted a puppy last week and we go running every morning.",
    "Last week I adopted a puppy; every morning we go running.",
    "The quarterly tax report is due to the accountant on Friday.",
]


def test_hashing_features_are_unigrams_and_bigrams():
    assert features("The cat, the Hat") == [
        "the",
        "cat",
        "the",
        "hat",
        "the cat",
        "cat the",
        "the hat",
    ]


def test_hashing_shapes_norms_and_similarity(hashing):
    vecs = hashing.encode(TEXTS + ["", "   "])
    assert vecs.shape == (5, 256) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs[:3], axis=1), 1.0, atol=1e-6)
    assert not vecs[3:].any(), "empty and whitespace-only texts are zero rows"
    sims = vecs[:3] @ vecs[0]
    assert sims[1] > 0.5 > sims[2], f"paraphrase must beat unrelated text: {sims}"


def test_hashing_is_deterministic_across_instances():
    a = HashingEmbedder(dim=64).encode(TEXTS)
    b = HashingEmbedder(dim=64).encode(TEXTS)
    assert np.array_equal(a, b)
    assert HashingEmbedder(dim=64).name == "hashing-64"


def test_hashing_known_vector():
    # "a b": features a, b, "a b" hashed with blake2b into 8 buckets; checked by recomputing.
    import hashlib

    expected = np.zeros(8)
    for f in ["a", "b", "a b"]:
        h = int.from_bytes(hashlib.blake2b(f.encode(), digest_size=8).digest(), "big")
        expected[h % 8] += 1.0 if (h >> 63) & 1 else -1.0
    expected /= np.linalg.norm(expected)
    np.testing.assert_allclose(HashingEmbedder(dim=8).encode(["A b"])[0], expected, atol=1e-6)


def test_memory_cache_hits_and_batching(hashing):
    hashing.batch_size = 2
    hashing.encode(TEXTS + [TEXTS[0]])  # duplicate within one call is embedded once
    assert hashing.cache_info.to_dict() == {
        "memory_hits": 0,
        "disk_hits": 0,
        "misses": 3,
        "batches": 2,
        "miss_tokens": 0,  # the hashing embedder has no model tokens to count
    }
    again = hashing.encode(TEXTS)
    assert hashing.cache_info.memory_hits == 3 and hashing.cache_info.misses == 3
    np.testing.assert_array_equal(again, hashing.encode(TEXTS))


def test_disk_cache_survives_instances(tmp_path):
    db = tmp_path / "emb.sqlite"
    first = HashingEmbedder(cache_path=db)
    vecs = first.encode(TEXTS)
    assert len(EmbeddingCache(db)) == 3
    second = HashingEmbedder(cache_path=db)
    np.testing.assert_array_equal(second.encode(TEXTS), vecs)
    assert second.cache_info.disk_hits == 3 and second.cache_info.misses == 0
    # another model name is another key space
    other = HashingEmbedder(dim=128, cache_path=db)
    other.encode(TEXTS[:1])
    assert other.cache_info.misses == 1 and len(EmbeddingCache(db)) == 4


def test_encode_rejects_bad_input(hashing):
    with pytest.raises(TypeError, match="single str"):
        hashing.encode("just one text")
    with pytest.raises(TypeError, match="text 1 is int"):
        hashing.encode(["ok", 3])
    assert hashing.encode([]).shape == (0, 256)


def test_minilm_shapes_norms_and_semantics(minilm):
    vecs = minilm.encode(TEXTS + [""])
    assert minilm.name == "all-MiniLM-L6-v2" and minilm.dim == 384
    assert vecs.shape == (4, 384) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs[:3], axis=1), 1.0, atol=1e-5)
    assert not vecs[3].any()
    sims = vecs[:3] @ vecs[0]
    assert sims[1] > 0.8 and sims[2] < 0.3, sims
    # a synonym-only paraphrase: MiniLM sees it, word hashing cannot
    dog = minilm.encode(["My dog is sick.", "My puppy is ill.", "My car is red."])
    assert dog[0] @ dog[1] > dog[0] @ dog[2]


def test_minilm_batches_match_single_calls(minilm):
    together = minilm.encode(TEXTS)
    single = np.stack([minilm._embed_batch([t])[0] for t in TEXTS])
    np.testing.assert_allclose(together, single, atol=1e-5)


def test_minilm_counts_the_word_pieces_of_its_misses(tmp_path):
    """Hand-counted: [CLS] hello world [SEP] = 4; [CLS] hello , world ! i ' m here . [SEP] =
    11; 300 words are cut at MiniLM's 256 word pieces; hits (memory or disk) add nothing."""
    from recallbench import meter
    from recallbench.embed import MiniLMEmbedder

    texts = ["hello world", "Hello, world! I'm here.", "word " * 300]
    before = meter.snapshot()
    first = MiniLMEmbedder(cache_path=tmp_path / "emb.sqlite", batch_size=2)
    first.encode(texts[:2] + texts[:1])
    assert first.cache_info.miss_tokens == 4 + 11 and first.cache_info.misses == 2
    first.encode(texts)  # two memory hits, one miss of 256 pieces
    assert first.cache_info.miss_tokens == 4 + 11 + 256
    second = MiniLMEmbedder(cache_path=tmp_path / "emb.sqlite")
    second.encode(texts)  # all from disk
    assert second.cache_info.miss_tokens == 0 and second.cache_info.disk_hits == 3
    assert meter.delta(before)["embeddings"]["miss_tokens"] == 4 + 11 + 256


@pytest.mark.parametrize("path", sorted(CONF.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_embedder_config_builds(path, monkeypatch):
    cfg = OmegaConf.to_container(OmegaConf.load(path))
    if cfg["kind"] == "openai":
        monkeypatch.setenv(cfg["api_key_env"], "sk-test")
        cfg["base_url"] = "http://127.0.0.1:9/v1"  # never contacted: building makes no request
    emb = build_embedder(cfg)  # by its _target_, as a run builds it
    # the kind label names the class _target_ builds, so a run folder recorded before _target_
    # (kind only) rebuilds the same embedder
    assert cfg["_target_"] == BY_NAME["embedder"][1][cfg["kind"]]
    legacy = {k: v for k, v in cfg.items() if k != "_target_"}
    assert type(build_embedder(legacy)) is type(emb)
    assert emb.dim in (256, 384, 1536)
    assert isinstance(emb.name, str) and emb.name


def test_build_embedder_errors():
    with pytest.raises(KeyError, match="Did you mean 'hashing'"):
        build_embedder({"kind": "hashin"})
    with pytest.raises(ConfigError, match="neither _target_ nor 'kind'"):
        build_embedder({"dim": 3})
    with pytest.raises(ConfigError, match="embedder: .*HashingEmbedder.*colour"):
        build_embedder({"kind": "hashing", "colour": "red"})


def test_a_store_value_that_is_not_a_vector_is_an_error_naming_where(tmp_path):
    from recallbench.embed.cache import EmbeddingCache, decode, encode, text_key
    from recallbench.store import SqliteStore

    vec = np.arange(3, dtype=np.float32)
    assert np.array_equal(decode(encode(vec)), vec)
    store = SqliteStore(tmp_path / "s")
    cache = EmbeddingCache(tmp_path / "unused", store=store)
    for bad in ({"dim": "3", "f32": encode(vec)["f32"]}, [3, "AAAA"], None):
        store.put_many("emb:m", {text_key("k"): bad})
        with pytest.raises(ValueError, match=r"s emb:m \w+: corrupt vector: expected \{dim, f32\}"):
            cache.get_many("m", ["k"])
    with pytest.raises(ValueError, match="corrupt vector: 3 floats, expected 4"):
        decode({**encode(vec), "dim": 4})


class _SlowModel:
    """A stand-in for MiniLM's forward pass: 30 ms a call, counting calls inside at once."""

    def __init__(self) -> None:
        from recallbench.testing.embedders import Overlap

        self.overlap = Overlap()

    def encode(self, texts, **_):
        with self.overlap.call():
            return np.ones((len(texts), 384), dtype=np.float32)

    def preprocess(self, texts):
        return {"attention_mask": np.ones((len(texts), 3))}


def test_minilms_lock_wait_is_timed_apart_so_threads_count_each_pass_once():
    # threads embedding at once (workers > 1, LangGraph's store) used to time their wait for the
    # model's lock as embedding: the meter adds threads up, so the seconds exceeded the wall
    import threading
    import time

    from recallbench import meter
    from recallbench.embed.minilm import MiniLMEmbedder

    model = _SlowModel()

    class Slow(MiniLMEmbedder):
        _model = model  # no checkpoint loaded: the stand-in's passes

    embedder = Slow()
    before = meter.snapshot()["seconds"]
    started = time.perf_counter()
    threads = [threading.Thread(target=embedder.encode, args=([f"text {i}"],)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    after = meter.snapshot()["seconds"]
    timed = after.get("embeddings", 0.0) - before.get("embeddings", 0.0)
    waited = after.get("embedder_wait", 0.0) - before.get("embedder_wait", 0.0)
    assert model.overlap.most == 1  # one pass at a time
    assert 6 * 0.03 <= timed <= wall  # each pass counted once
    assert waited >= 0.03 * (1 + 2 + 3 + 4 + 5) * 0.8  # the queue's waits, apart
