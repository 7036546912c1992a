"""On-disk embedding cache: SQLite (WAL) keyed by model name + sha256 of the text.

The values go through the one cache layer (``recallbench.store.values``): a model's vectors are
the namespace ``emb:<model>``, a value ``{"dim": d, "f32": <base64 of the float32 bytes>}``
(read back bit for bit). With a server store (``store=redis://...``) that value is what the
server holds; in the SQLite file (WAL, so parallel Hydra jobs read while one writes; created
under a file lock) the table ``embeddings(model, key, dim, vec)`` keeps the raw float32 bytes
with their dimension, as the first runs wrote it, so no pickle is involved and a wrong-size row
is detected on read.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import TypedDict

import numpy as np

from recallbench.store import JSONValue, Store, server_store
from recallbench.store.values import Layout, Row, Table, Values, cache_values

PREFIX = "emb:"  # a model's namespace: emb:<model>


def text_key(text: str) -> str:
    """Return the cache key of ``text`` (sha256 hex of its UTF-8 bytes)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def namespace(model: str) -> str:
    """The store namespace of one model's vectors."""
    return f"{PREFIX}{model}"


class StoredVector(TypedDict):
    """A vector as a store value: its dimension and its float32 bytes in base64."""

    dim: int
    f32: str


def encode(vec: np.ndarray) -> StoredVector:
    """A vector as a JSON store value (float32 bytes in base64: exact)."""
    data = np.asarray(vec, dtype=np.float32)
    return {"dim": int(data.shape[0]), "f32": base64.b64encode(data.tobytes()).decode("ascii")}


def decode(value: JSONValue) -> np.ndarray:
    """The vector of a server's value; a wrong-shaped or wrong-size one is an error (the cache
    layer names where)."""
    match value:
        case {"dim": int(dim), "f32": str(f32)}:
            vec = np.frombuffer(base64.b64decode(f32), dtype=np.float32)
        case _:
            raise ValueError(f"corrupt vector: expected {{dim, f32}}, got {value!r:.80}")
    if vec.shape != (dim,):
        raise ValueError(f"corrupt vector: {vec.size} floats, expected {dim}")
    return vec.copy()


def _vector_row(vec: np.ndarray) -> Row:
    """The ``(dim, vec)`` columns of a vector (its float32 bytes)."""
    data = np.asarray(vec, dtype=np.float32)
    return int(data.shape[0]), data.tobytes()


def _vector_value(row: Row) -> np.ndarray:
    """The vector of ``(dim, vec)`` columns; a wrong-size row is an error."""
    dim, blob = row
    if not isinstance(blob, bytes) or not isinstance(dim, int):
        raise ValueError(f"corrupt vector row: expected (dim, bytes), got {type(blob).__name__}")
    vec: np.ndarray = np.frombuffer(blob, dtype=np.float32)
    if vec.shape != (dim,):
        raise ValueError(f"corrupt vector: {vec.size} floats, expected {dim}")
    return vec.copy()


def _to_json(vec: np.ndarray) -> JSONValue:
    stored = encode(vec)
    return {"dim": stored["dim"], "f32": stored["f32"]}


# How a vector is kept (``store.values``): the file's one table, as every run since the first
# wrote it (raw float32 bytes); on a server ``{"dim", "f32"}`` (``encode``).
VECTORS: Table[np.ndarray] = Table(
    "embeddings", PREFIX, ("dim", "vec"), _vector_row, _vector_value, _to_json, decode
)
LAYOUT = Layout(
    "embedding cache",
    """
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL,
    key TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vec BLOB NOT NULL,
    PRIMARY KEY (model, key)
);
""",
    (VECTORS,),
)


def open_embedding_cache(path: str | Path) -> EmbeddingCache:
    """The embedding cache of a run: the process's server store when there is one, else ``path``."""
    return EmbeddingCache(path, store=server_store())


class EmbeddingCache:
    """A persistent ``(model, text) -> vector`` store in one SQLite file (or a server store),
    through the one cache layer (``store.values``)."""

    def __init__(self, path: str | Path, store: Store | None = None) -> None:
        self.store = store
        self.path = Path(path)
        self.values: Values = cache_values(path, store, LAYOUT)

    def get_many(self, model: str, texts: list[str]) -> dict[str, np.ndarray]:
        """Return the cached vectors of ``texts`` under ``model`` (texts not cached are absent)."""
        by_key = {text_key(t): t for t in texts}
        got = self.values.get(VECTORS, namespace(model), list(by_key))
        return {by_key[k]: v for k, v in got.items()}

    def put_many(self, model: str, vectors: dict[str, np.ndarray]) -> None:
        """Store ``text -> vector`` rows under ``model`` (existing rows are replaced)."""
        values = {text_key(t): v for t, v in vectors.items()}
        self.values.put(VECTORS, namespace(model), values)

    def __bool__(self) -> bool:
        return True  # a cache is there even when empty (``__len__`` may ask a server)

    def __len__(self) -> int:
        spaces = (n for n in self.values.namespaces() if n.startswith(PREFIX))
        return sum(self.values.count(n) for n in spaces)

    def close(self) -> None:
        """Close the database file (a server store stays open: the run closes it)."""
        self.values.close()
