"""A deterministic, model-free embedder for tests and the offline extractive pipeline.

Signed feature hashing (Weinberger et al., 2009) of lowercased word unigrams and bigrams into
``dim`` buckets, then L2 normalization. Texts sharing words get a higher cosine than unrelated
texts; there is no notion of synonyms. The hash is blake2b (stable across processes and Python
versions, unlike ``hash()``), so vectors are identical on every machine.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

from recallbench.embed.base import Embedder

_WORD = re.compile(r"\w+")


@lru_cache(maxsize=200_000)
def _bucket(feature: str, dim: int) -> tuple[int, float]:
    """Return (bucket index, sign) of a feature string."""
    h = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "big")
    return h % dim, (1.0 if (h >> 63) & 1 else -1.0)


def features(text: str) -> list[str]:
    """Return the hashed features of ``text``: word unigrams and ``w1 w2`` bigrams, lowercased."""
    words = _WORD.findall(text.lower())
    return words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]


class HashingEmbedder(Embedder):
    """Signed hashing of word unigrams + bigrams into ``dim`` dimensions.

    Args:
        dim: number of buckets (256 by default: few collisions for sentence-length texts).
        batch_size, cache_path: see ``Embedder`` (caching matters little here; kept for parity).
    """

    def __init__(
        self, dim: int = 256, *, batch_size: int = 256, cache_path: str | Path | None = None
    ) -> None:
        if dim < 2:
            raise ValueError(f"dim must be >= 2, got {dim}")
        self.dim = dim
        self.name = f"hashing-{dim}"
        super().__init__(batch_size=batch_size, cache_path=cache_path)

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature in features(text):
                index, sign = _bucket(feature, self.dim)
                out[row, index] += sign
        return out
