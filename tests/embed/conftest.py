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


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """Run these tests with one torch thread, restored afterwards.

    Their forward passes are tiny; on a busy 2-core machine a second OpenMP thread spins instead
    of working (measured: this folder pair took 80 s with 2 threads, 27 s with 1, same load).
    """
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
