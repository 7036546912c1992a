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
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from recallbench.io import connect_shared, unusable_cache, write_immediate

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


def model_key(identity: Mapping[str, Any]) -> str:
    """Return the cache's model key: sha256 (first 24 hex) of the identity + ``SCHEME``."""
    blob = json.dumps({**identity, "scheme": SCHEME}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:24]


def pair_key(context: str | None, text: str) -> str:
    """Return the row key of a (context, text) pair: sha256 hex of its canonical JSON."""
    blob = json.dumps([context or "", text], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ScoreCache:
    """A persistent ``(model key, context, text) -> (nll, tokens)`` store in one SQLite file.

    Args:
        path: the database file (its folder is created); ``":memory:"`` for a private cache.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._conn = connect_shared(self.path, _SCHEMA, "LM score cache")
        self._lock = threading.Lock()  # one connection shared by this process's threads
        with self._lock, unusable_cache(self.path, "LM score cache"):
            self._conn.execute("SELECT COUNT(*) FROM scores LIMIT 1").fetchone()

    def register(self, key: str, identity: Mapping[str, Any]) -> None:
        """Record what a model key stands for (for people reading the file)."""
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
        with self._lock:
            write_immediate(self._conn, "INSERT OR REPLACE INTO scores VALUES (?, ?, ?, ?)", rows)

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM scores").fetchone()[0])

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._conn.close()

    def __repr__(self) -> str:
        return f"ScoreCache({self.path!r})"
