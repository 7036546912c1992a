"""On-disk embedding cache: SQLite (WAL) keyed by model name + sha256 of the text.

WAL mode lets parallel Hydra jobs read while one writes; the file is created under a file lock
(``recallbench.io.connect_shared``), so jobs that start together do not race at creation. Vectors are stored as raw float32 bytes
with their dimension, so no pickle is involved and a wrong-size row is detected on read.

With a server store (``store=redis://...``) the rows live in its namespace ``emb:<model>``
(value: ``{"dim": d, "f32": <base64 of the float32 bytes>}``, read back bit for bit).
"""

from __future__ import annotations

import base64
import hashlib
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TypedDict

import numpy as np

from recallbench.io import connect_shared, db_file, write_immediate
from recallbench.store import JSONValue, Store, server_store

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL,
    key TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vec BLOB NOT NULL,
    PRIMARY KEY (model, key)
);
"""
_CHUNK = 500  # SQLite's default limit on host parameters is 999


def text_key(text: str) -> str:
    """Return the cache key of ``text`` (sha256 hex of its UTF-8 bytes)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def namespace(model: str) -> str:
    """The store namespace of one model's vectors."""
    return f"emb:{model}"


class StoredVector(TypedDict):
    """A vector as a store value: its dimension and its float32 bytes in base64."""

    dim: int
    f32: str


def encode(vec: np.ndarray) -> StoredVector:
    """A vector as a JSON store value (float32 bytes in base64: exact)."""
    data = np.asarray(vec, dtype=np.float32)
    return {"dim": int(data.shape[0]), "f32": base64.b64encode(data.tobytes()).decode("ascii")}


def decode(value: JSONValue, where: str) -> np.ndarray:
    """The vector of a store value; a wrong-shaped or wrong-size one is an error naming ``where``."""
    match value:
        case {"dim": int(dim), "f32": str(f32)}:
            vec = np.frombuffer(base64.b64decode(f32), dtype=np.float32)
        case _:
            raise ValueError(f"{where}: corrupt vector: expected {{dim, f32}}, got {value!r:.80}")
    if vec.shape != (dim,):
        raise ValueError(f"{where}: corrupt vector: {vec.size} floats, expected {dim}")
    return vec.copy()


def open_embedding_cache(path: str | Path) -> EmbeddingCache:
    """The embedding cache of a run: the process's server store when there is one, else ``path``."""
    store = server_store()
    return EmbeddingCache(path, store=store) if store is not None else EmbeddingCache(path)


class EmbeddingCache:
    """A persistent ``(model, text) -> vector`` store in one SQLite file (or a server store)."""

    def __init__(self, path: str | Path, store: Store | None = None) -> None:
        self.store = store
        self.path = Path(db_file(path, "embedding cache"))
        self._lock = threading.Lock()
        if store is not None:
            return
        # One connection shared by this process's threads (concurrent episodes), serialized.
        self._conn = connect_shared(self.path, _SCHEMA, "embedding cache")

    def get_many(self, model: str, texts: list[str]) -> dict[str, np.ndarray]:
        """Return the cached vectors of ``texts`` under ``model`` (texts not cached are absent)."""
        by_key = {text_key(t): t for t in texts}
        keys = list(by_key)
        found: dict[str, np.ndarray] = {}
        if self.store is not None:
            got = self.store.get_many(namespace(model), keys)
            where = f"{self.store.url} {namespace(model)}"
            return {by_key[k]: decode(v, where) for k, v in got.items()}
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            with self._lock:
                rows = self._conn.execute(
                    f"SELECT key, dim, vec FROM embeddings WHERE model = ? AND key IN ({marks})",
                    [model, *chunk],
                ).fetchall()
            for key, dim, blob in rows:
                vec = np.frombuffer(blob, dtype=np.float32)
                if vec.shape != (dim,):
                    raise ValueError(
                        f"{self.path}: corrupt row for model {model!r}: {vec.size} floats, "
                        f"expected {dim}"
                    )
                found[by_key[key]] = vec.copy()
        return found

    def put_many(self, model: str, vectors: dict[str, np.ndarray]) -> None:
        """Store ``text -> vector`` rows under ``model`` (existing rows are replaced)."""
        if self.store is not None:
            values = {text_key(t): encode(v) for t, v in vectors.items()}
            self.store.put_many(namespace(model), values)
            return
        rows = [
            (model, text_key(t), int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes())
            for t, v in vectors.items()
        ]
        with self._lock:  # one write transaction for the batch
            write_immediate(
                self._conn, "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)", rows
            )

    def entries(self) -> Iterator[tuple[str, str, StoredVector]]:
        """Every row of the SQLite file as ``(model, key, store value)`` (``recallbench cache``)."""
        with self._lock:
            rows = self._conn.execute("SELECT model, key, vec FROM embeddings").fetchall()
        for model, key, blob in rows:
            yield model, key, encode(np.frombuffer(blob, dtype=np.float32))

    def put_entries(self, model: str, values: Mapping[str, JSONValue]) -> None:
        """Store rows given as ``key -> store value`` under ``model`` (``recallbench cache``)."""
        where = f"{self.path} {namespace(model)}"
        if self.store is not None:
            self.store.put_many(namespace(model), values)
            return
        rows = []
        for key, value in values.items():
            vec = decode(value, where)
            rows.append((model, key, int(vec.shape[0]), vec.tobytes()))
        with self._lock:
            write_immediate(
                self._conn, "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)", rows
            )

    def __bool__(self) -> bool:
        return True  # a cache is there even when empty (``__len__`` may ask a server)

    def __len__(self) -> int:
        if self.store is not None:
            return sum(self.store.count(n) for n in self.store.namespaces() if n.startswith("emb:"))
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])

    def close(self) -> None:
        """Close the database connection (a store stays open: the run closes it)."""
        if self.store is not None:
            return
        with self._lock:
            self._conn.close()
