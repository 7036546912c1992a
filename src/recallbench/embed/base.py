"""The Embedder base class: batching, per-text caching and L2 normalization in one place.

Subclasses implement one method, ``_embed_batch(texts) -> (n, dim) array``; ``encode`` takes care
of the rest so every embedder behaves the same way:

- rows are float32 and L2-normalized, so a dot product is the cosine similarity;
- an empty or whitespace-only text is a zero row (nothing to embed; the OpenAI API rejects empty
  inputs, and a zero row gives cosine 0 with everything, so an empty memory never matches);
- each distinct text is embedded once: an in-memory dict, then an optional on-disk SQLite cache
  (``EmbeddingCache``) shared by runs and parallel Hydra jobs, then the model, in batches.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from recallbench import meter
from recallbench.embed.cache import open_embedding_cache


@dataclass
class CacheInfo:
    """Counters of ``Embedder.encode``: texts served from memory, disk, or the model.

    ``miss_tokens``: the model's input tokens of the missed texts, as the model reads them
    (word pieces with the special tokens, truncated at its maximum length): what the encodes
    cost, so a stage's floor can be priced on its own texts (``bench/embed_floor.py``). It
    stays 0 for an embedder that cannot count them (``_count_tokens`` returns None); ``usage.json``
    then has no ``compute.embeddings.miss_tokens``.
    """

    memory_hits: int = 0
    disk_hits: int = 0
    misses: int = 0
    batches: int = 0
    miss_tokens: int = 0

    def to_dict(self) -> dict[str, int]:
        """Return the counters as a plain dict."""
        return dict(vars(self))


def l2_normalize(matrix: np.ndarray) -> np.ndarray:
    """Return float32 rows scaled to unit L2 norm; all-zero rows stay zero."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1.0).astype(np.float32)


@runtime_checkable
class TextEmbedder(Protocol):
    """What memory methods and metrics use of an embedder (every ``Embedder`` is one).

    ``name`` identifies the model (cache keys, run records); ``encode`` returns an ``(n, dim)``
    float32 matrix of unit rows, so a dot product is the cosine similarity.
    """

    name: str
    dim: int

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


class Embedder(ABC):
    """Text -> unit vectors. ``name`` identifies the model (it is part of every cache key).

    Args:
        batch_size: texts per model call.
        cache_path: SQLite file for the on-disk cache; ``None`` keeps the cache in memory only.
    """

    name: str
    dim: int

    def __init__(self, *, batch_size: int = 64, cache_path: str | Path | None = None) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.batch_size = batch_size
        self._memory: dict[str, np.ndarray] = {}
        self._disk = open_embedding_cache(cache_path) if cache_path else None
        self.cache_info = CacheInfo()

    @abstractmethod
    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        """Embed non-empty texts with the model; return an (n, dim) array (any norm)."""

    def _count_tokens(self, texts: list[str]) -> int | None:
        """The model's input tokens of ``texts`` as it reads them (truncated); None: unknown."""
        return None

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Return an (n, dim) float32 matrix of L2-normalized rows, one per text, in order."""
        if isinstance(texts, str):
            raise TypeError("encode takes a list of texts, got a single str; wrap it in a list")
        with meter.timed("embeddings"):
            before = self.cache_info.to_dict()
            out = self._encode(texts)
            for field, n in self.cache_info.to_dict().items():
                meter.count(f"embeddings.{field}", n - before[field])
        return out

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        todo: dict[str, list[int]] = {}
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"text {i} is {type(text).__name__}, expected str")
            if not text.strip():
                continue
            if text in self._memory:
                out[i] = self._memory[text]
                self.cache_info.memory_hits += 1
            else:
                todo.setdefault(text, []).append(i)
        if todo and self._disk is not None:
            for text, vec in self._disk.get_many(self.name, list(todo)).items():
                self._remember(text, vec, todo.pop(text), out)
                self.cache_info.disk_hits += 1
        missing = sorted(todo, key=len)  # batches of similar length pad less (chars ~ tokens)
        for start in range(0, len(missing), self.batch_size):
            batch = missing[start : start + self.batch_size]
            vecs = l2_normalize(self._checked(self._embed_batch(batch), len(batch)))
            self.cache_info.batches += 1
            self.cache_info.misses += len(batch)
            self.cache_info.miss_tokens += self._count_tokens(batch) or 0
            if self._disk is not None:
                self._disk.put_many(self.name, dict(zip(batch, vecs, strict=True)))
            for text, vec in zip(batch, vecs, strict=True):
                self._remember(text, vec, todo[text], out)
        return out

    def _remember(self, text: str, vec: np.ndarray, rows: list[int], out: np.ndarray) -> None:
        self._memory[text] = vec
        out[rows] = vec

    def _checked(self, matrix: np.ndarray, n: int) -> np.ndarray:
        matrix = np.asarray(matrix, dtype=np.float32)
        if matrix.shape != (n, self.dim):
            raise ValueError(
                f"embedder {self.name!r} returned shape {matrix.shape}, expected {(n, self.dim)}"
            )
        if not np.isfinite(matrix).all():
            raise ValueError(f"embedder {self.name!r} returned non-finite values")
        return matrix

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, dim={self.dim})"
