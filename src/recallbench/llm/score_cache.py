"""On-disk cache of causal-LM scores: (model, context, text) -> (summed NLL, token count).

Every perplexity user (LUFY's surprise, the perplexity metric of CareCall Tables 4 and 6, the
LUFY weight fit) reads and writes one file, ``<paths.cache_dir>/lm_scores.sqlite``, so a triple
scored by one run is never scored again by another: LUFY and its five ablations, the tables that
reuse LUFY's runs, the CareCall rows that share contexts, a rerun.

Key: the model's identity (``model_key``: name, revision, quantization, dtype, and the scoring
recipe ``SCHEME``) and the sha256 of the (context, text) pair. Values are the summed NLL in nats
(SQLite REAL, a float64: read back bit for bit) and the number of scored tokens. The file is
opened with ``recallbench.io.connect_shared`` (created under a file lock, WAL), so parallel jobs
(a joblib sweep, a SLURM array on one node) share it; a batch is written in one ``BEGIN
IMMEDIATE`` transaction. Identical keys hold identical values, so two writers of one key are
harmless.

With a server store (``store=redis://...``) the rows live in its namespace ``lm:<model key>``
(value ``[nll, tokens]``; JSON floats read back bit for bit) and the identities in
``lm-models``.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from recallbench.io import connect_shared, db_file, unusable_cache, write_immediate
from recallbench.store import JSONValue, Store

# The scoring recipe of ``recallbench.llm.perplexity``: a change to it must change this string.
SCHEME = (
    "nll-v1: <|endoftext|> (else BOS, else EOS), context + '\\n' and text tokenized apart without "
    "special tokens; text cut from the right to window-1, context from the left to what remains"
)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS scores (
    model TEXT NOT NULL,
    key TEXT NOT NULL,
    nll REAL NOT NULL,
    tokens INTEGER NOT NULL,
    PRIMARY KEY (model, key)
);
CREATE TABLE IF NOT EXISTS models (
    model TEXT PRIMARY KEY,
    identity TEXT NOT NULL,
    created REAL NOT NULL
);
"""
_CHUNK = 400  # pairs per SELECT: SQLite's default limit on host parameters is 999

Pair = tuple[str | None, str]  # (context, text); None and "" both mean "no context"


def model_key(identity: Mapping[str, object]) -> str:
    """Return the cache's model key: sha256 (first 24 hex) of the identity + ``SCHEME``."""
    blob = json.dumps({**identity, "scheme": SCHEME}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:24]


def pair_key(context: str | None, text: str) -> str:
    """Return the row key of a (context, text) pair: sha256 hex of its canonical JSON."""
    blob = json.dumps([context or "", text], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _stored_score(value: JSONValue, where: str) -> tuple[float, int]:
    """``(nll, tokens)`` of a store value ``[nll, tokens]``; another shape is an error."""
    match value:
        case [int() | float() as nll, int() as tokens]:
            return float(nll), tokens
    raise ValueError(f"{where}: corrupt score: expected [nll, tokens], got {value!r:.80}")


class ScoreCache:
    """A persistent ``(model key, context, text) -> (nll, tokens)`` store in one SQLite file.

    Args:
        path: the database file (its folder is created); ``":memory:"`` for a private cache.
        store: a server store (``recallbench.store``): the rows live there, ``path`` is unused.
    """

    def __init__(self, path: str | Path, store: Store | None = None) -> None:
        self.store = store
        self.path = db_file(path, "LM score cache") if store is None else store.url
        self._lock = threading.Lock()  # one connection shared by this process's threads
        if store is not None:
            return
        self._conn = connect_shared(self.path, _SCHEMA, "LM score cache")
        with self._lock, unusable_cache(self.path, "LM score cache"):
            self._conn.execute("SELECT COUNT(*) FROM scores LIMIT 1").fetchone()

    def register(self, key: str, identity: Mapping[str, object]) -> None:
        """Record what a model key stands for (for people reading the file)."""
        if self.store is not None:
            self.store.put_many("lm-models", {key: {**identity, "scheme": SCHEME}})
            return
        text = json.dumps({**identity, "scheme": SCHEME}, sort_keys=True, ensure_ascii=False)
        with self._lock:
            self._conn.execute(
                "INSERT OR IGNORE INTO models VALUES (?, ?, ?)", (key, text, time.time())
            )

    def get_many(self, model: str, pairs: Iterable[Pair]) -> dict[Pair, tuple[float, int]]:
        """Return the stored scores of ``pairs`` under ``model`` (pairs not stored are absent)."""
        by_key = {pair_key(c, t): (c, t) for c, t in pairs}
        keys = list(by_key)
        found: dict[Pair, tuple[float, int]] = {}
        if self.store is not None:
            got = self.store.get_many(f"lm:{model}", keys)
            where = f"{self.store.url} lm:{model}"
            return {by_key[k]: _stored_score(v, f"{where} {k}") for k, v in got.items()}
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            with self._lock:
                rows = self._conn.execute(
                    f"SELECT key, nll, tokens FROM scores WHERE model = ? AND key IN ({marks})",
                    [model, *chunk],
                ).fetchall()
            for key, nll, tokens in rows:
                found[by_key[key]] = (float(nll), int(tokens))
        return found

    def put_many(self, model: str, scores: Mapping[Pair, tuple[float, int]]) -> None:
        """Store ``(context, text) -> (nll, tokens)`` rows under ``model``, in one transaction."""
        rows = [(model, pair_key(c, t), float(v[0]), int(v[1])) for (c, t), v in scores.items()]
        if not rows:
            return
        if self.store is not None:
            self.store.put_many(f"lm:{model}", {key: [nll, n] for _, key, nll, n in rows})
            return
        with self._lock:
            write_immediate(self._conn, "INSERT OR REPLACE INTO scores VALUES (?, ?, ?, ?)", rows)

    def entries(self) -> Iterator[tuple[str, str, list[float]]]:
        """Every score of the SQLite file as ``(model, key, [nll, tokens])`` (``recallbench
        cache``); ``identities()`` gives the models table."""
        with self._lock:
            rows = self._conn.execute("SELECT model, key, nll, tokens FROM scores").fetchall()
        for model, key, nll, tokens in rows:
            yield model, key, [float(nll), int(tokens)]

    def identities(self) -> dict[str, dict[str, JSONValue]]:
        """The models table: model key -> its identity."""
        with self._lock:
            rows = self._conn.execute("SELECT model, identity FROM models").fetchall()
        return {m: json.loads(i) for m, i in rows}

    def put_entries(self, model: str, values: Mapping[str, list[float]]) -> None:
        """Store ``key -> [nll, tokens]`` rows under ``model`` (``recallbench cache``)."""
        if self.store is not None:
            self.store.put_many(f"lm:{model}", values)
            return
        rows = [(model, k, float(v[0]), int(v[1])) for k, v in values.items()]
        with self._lock:
            write_immediate(self._conn, "INSERT OR REPLACE INTO scores VALUES (?, ?, ?, ?)", rows)

    def __bool__(self) -> bool:
        return True  # a cache is there even when empty (``__len__`` may ask a server)

    def __len__(self) -> int:
        if self.store is not None:
            return sum(self.store.count(n) for n in self.store.namespaces() if n.startswith("lm:"))
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM scores").fetchone()[0])

    def close(self) -> None:
        """Close the database connection (a store stays open: the run closes it)."""
        if self.store is not None:
            return
        with self._lock:
            self._conn.close()

    def __repr__(self) -> str:
        return f"ScoreCache({self.path!r})"
