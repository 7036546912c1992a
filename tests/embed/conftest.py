"""Shared embedders for tests/embed: MiniLM loads once per session (a few seconds)."""

from __future__ import annotations

import pytest

from recallbench.embed import HashingEmbedder, MiniLMEmbedder


@pytest.fixture(scope="session")
def minilm() -> MiniLMEmbedder:
    """The offline all-MiniLM-L6-v2 embedder (model shared process-wide)."""
    return MiniLMEmbedder()


@pytest.fixture
def hashing() -> HashingEmbedder:
    """A fresh hashing embedder (fresh cache counters)."""
    return HashingEmbedder()
