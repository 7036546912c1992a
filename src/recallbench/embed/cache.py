"""On-disk embedding cache: SQLite (WAL) keyed by model name + sha256 of the text.

WAL mode lets parallel Hydra jobs read while one writes; the file is created under a file lock
(``recallbench.io.connect_shared``), so jobs that start together do not race at creation. Vectors are stored as raw float32 bytes
with their dimension, so no pickle is involved and a wrong-size row is detected on read.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import numpy as np

from recallbench.io import connect_shared, write_immediate

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


class EmbeddingCache:
    """A persistent ``(model, text) -> vector`` store in one SQLite file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._conn = connect_shared(self.path, _SCHEMA, "embedding cache")
        # One connection shared by this process's threads (concurrent episodes), serialized.
        self._lock = threading.Lock()

    def get_many(self, model: str, texts: list[str]) -> dict[str, np.ndarray]:
        """Return the cached vectors of ``texts`` under ``model`` (texts not cached are absent)."""
        by_key = {text_key(t): t for t in texts}
        keys = list(by_key)
        found: dict[str, np.ndarray] = {}
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
        rows = [
            (model, text_key(t), int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes())
            for t, v in vectors.items()
        ]
        with self._lock:  # one write transaction for the batch
            write_immediate(
                self._conn, "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)", rows
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._conn.close()
