"""The one cache layer (``store.values``, issue 53 item 6): the four caches read cache files
written before it (literal SQL below, as the older code wrote them), write files the older
code's queries still read, and answer the same through a server store."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from recallbench.embed.cache import EmbeddingCache, text_key
from recallbench.llm.cache import Cache, cached_reply
from recallbench.llm.score_cache import ScoreCache, pair_key
from recallbench.metrics.cache import MetricCache
from recallbench.store import open_store
from recallbench.store.values import Layout, SqliteValues, Table

# Cache files as the code before the layer created and filled them (its schemas and INSERTs).
OLD_FILES = {
    "llm.sqlite": """
CREATE TABLE replies (key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL NOT NULL);
INSERT INTO replies VALUES ('k1',
  '{"completion_tokens": 2, "model": "gpt-4o", "prompt_tokens": 11, "text": "Paris."}', 1.7e9);
""",
    "embeddings.sqlite": """
CREATE TABLE embeddings (model TEXT NOT NULL, key TEXT NOT NULL, dim INTEGER NOT NULL,
  vec BLOB NOT NULL, PRIMARY KEY (model, key));
INSERT INTO embeddings VALUES ('minilm',
  '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824', 2, x'0000803f000000c0');
INSERT INTO embeddings VALUES ('broken',
  '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824', 3, x'0000803f000000c0');
""",
    "lm_scores.sqlite": """
CREATE TABLE scores (model TEXT NOT NULL, key TEXT NOT NULL, nll REAL NOT NULL,
  tokens INTEGER NOT NULL, PRIMARY KEY (model, key));
CREATE TABLE models (model TEXT PRIMARY KEY, identity TEXT NOT NULL, created REAL NOT NULL);
INSERT INTO scores VALUES ('m1',
  'b187da80b76a4067aa6a032efcc48d127ec90f13c9a9e7b4c70385c1c08f8726', 12.345678901234567, 7);
INSERT INTO models VALUES ('m1', '{"name": "smollm2", "scheme": "nll-v1"}', 1.7e9);
""",
    "metric_results.sqlite": """
CREATE TABLE results (key TEXT PRIMARY KEY, metric TEXT NOT NULL, identity TEXT NOT NULL,
  result TEXT NOT NULL, created REAL NOT NULL);
INSERT INTO results VALUES ('r1', 'bleu', '{"name": "bleu"}',
  '{"estimator": {"fn": "bleu"}, "items": null, "meta": {"n": 2}, "stats": {"data": [[1, 2],
  [3, 4]], "dtype": "int64", "shape": [2, 2]}, "value": 0.25}', 1.7e9);
""",
}


def old_file(folder: Path, name: str) -> Path:
    path = folder / name
    with sqlite3.connect(path) as conn:
        conn.executescript(OLD_FILES[name])
    return path


def test_the_literal_keys_are_the_caches_keys():
    """The fixture's keys are what the caches compute (else the reads below prove nothing)."""
    assert text_key("hello") == "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
    assert pair_key("ctx", "text") == (
        "b187da80b76a4067aa6a032efcc48d127ec90f13c9a9e7b4c70385c1c08f8726"
    )


def test_cache_files_written_before_the_layer_read_as_they_are(tmp_path):
    replies = Cache(old_file(tmp_path, "llm.sqlite"))
    assert cached_reply(replies.get("k1"), "k1") == {
        "text": "Paris.",
        "prompt_tokens": 11,
        "completion_tokens": 2,
        "model": "gpt-4o",
    }
    assert replies.get("absent") is None and len(replies) == 1

    vectors = EmbeddingCache(old_file(tmp_path, "embeddings.sqlite"))
    got = vectors.get_many("minilm", ["hello", "absent"])
    assert list(got) == ["hello"] and got["hello"].tolist() == [1.0, -2.0]
    assert got["hello"].dtype == np.float32
    with pytest.raises(ValueError, match=r"embeddings.sqlite emb:broken \w+: corrupt vector: 2 "):
        vectors.get_many("broken", ["hello"])

    scores = ScoreCache(old_file(tmp_path, "lm_scores.sqlite"))
    assert scores.get_many("m1", [("ctx", "text"), ("ctx", "other")]) == {
        ("ctx", "text"): (12.345678901234567, 7)
    }
    assert scores.values.get_json("lm-models", ["m1"]) == {
        "m1": {"name": "smollm2", "scheme": "nll-v1"}
    }

    results = MetricCache(old_file(tmp_path, "metric_results.sqlite"))
    found = results.get("r1")
    assert found is not None and (found.value, found.meta) == (0.25, {"n": 2})
    assert found.stats.dtype == np.int64 and found.stats.tolist() == [[1, 2], [3, 4]]
    assert results.get("r2") is None
    with sqlite3.connect(tmp_path / "metric_results.sqlite") as conn:
        conn.execute(
            """INSERT INTO results VALUES ('r3', 'f1', '{}', '{"value": "high", "meta": {}}', 0)"""
        )
    with pytest.raises(
        ValueError, match=r"metric_results.sqlite metric-results r3: corrupt metric"
    ):
        results.get("r3")


def test_files_written_now_keep_the_old_tables_and_rows(tmp_path):
    """What the layer writes is what the older code's own SELECTs read."""
    Cache(tmp_path / "llm.sqlite").put(
        "k", {"text": "x", "prompt_tokens": 1, "completion_tokens": 1}
    )
    vec = np.array([0.5, -1.25, 3e-8], dtype=np.float32)
    EmbeddingCache(tmp_path / "e.sqlite").put_many("minilm", {"hello": vec})
    ScoreCache(tmp_path / "s.sqlite").put_many("m1", {("ctx", "text"): (1.5, 3)})
    with sqlite3.connect(tmp_path / "llm.sqlite") as conn:
        (value,) = conn.execute("SELECT value FROM replies WHERE key = 'k'").fetchone()
    assert value == '{"completion_tokens": 1, "prompt_tokens": 1, "text": "x"}'
    with sqlite3.connect(tmp_path / "e.sqlite") as conn:
        row = conn.execute("SELECT model, key, dim, vec FROM embeddings").fetchone()
    assert row == ("minilm", text_key("hello"), 3, vec.tobytes())
    with sqlite3.connect(tmp_path / "s.sqlite") as conn:
        row = conn.execute("SELECT model, key, nll, tokens FROM scores").fetchone()
    assert row == ("m1", pair_key("ctx", "text"), 1.5, 3)


def test_a_file_and_a_server_store_answer_the_same(redis_server, tmp_path):
    server = open_store(redis_server.url, tmp_path)
    vec = np.array([0.1, -2.5, 3e-8], dtype=np.float32)
    for store in (None, server):
        vectors = EmbeddingCache(tmp_path / "e.sqlite", store=store)
        vectors.put_many("minilm", {"a": vec})
        assert vectors.get_many("minilm", ["a", "b"])["a"].tobytes() == vec.tobytes()
        assert len(vectors) == 1 and vectors.values.namespaces() == ["emb:minilm"]
        vectors.close()  # a server store stays open: the run closes it
    assert server.count("emb:minilm") == 1
    server.close()


def test_a_layout_routes_namespaces_to_tables_and_refuses_others(tmp_path):
    def to_row(value: str) -> tuple[object, ...]:
        return (value,)

    def from_row(row) -> str:
        return str(row[0])

    layout = Layout(
        "test cache",
        "CREATE TABLE IF NOT EXISTS t (model TEXT, key TEXT, v TEXT, PRIMARY KEY (model, key));"
        "CREATE TABLE IF NOT EXISTS once (key TEXT PRIMARY KEY, v TEXT);",
        (
            Table("t", "p:", ("v",), to_row, from_row, str, str),
            Table("once", "first", ("v",), to_row, from_row, str, str, insert="IGNORE"),
        ),
    )
    prefixed, once = layout.tables
    values = SqliteValues(tmp_path / "v.sqlite", layout)
    values.put(prefixed, "p:a", {"k": "1", "j": "2"})
    values.put(prefixed, "p:b", {"k": "3"})
    values.put(once, "first", {"k": "kept"})
    values.put_json("first", {"k": "ignored"})
    assert values.get(prefixed, "p:a", ["k", "j", "x"]) == {"k": "1", "j": "2"}
    assert values.get_json("p:b", ["k"]) == {"k": "3"} and values.count("p:a") == 2
    assert values.get(once, "first", ["k"]) == {"k": "kept"}
    assert values.namespaces() == ["first", "p:a", "p:b"]
    assert sorted(values.scan("p:a")) == [("j", "2"), ("k", "1")]
    with pytest.raises(KeyError, match=r"v.sqlite: no namespace 'other' in a test cache"):
        values.get_json("other", ["k"])
    many = {f"k{i}": str(i) for i in range(1000)}  # more keys than one SELECT may name
    values.put(prefixed, "p:c", many)
    assert values.get(prefixed, "p:c", list(many)) == many
