"""Shared fixtures for tests/metrics: MiniLM and SmolLM2 load once per session."""

from __future__ import annotations

import pytest

from recallbench.embed import MiniLMEmbedder


@pytest.fixture(scope="session")
def minilm() -> MiniLMEmbedder:
    """The offline all-MiniLM-L6-v2 embedder (model shared process-wide)."""
    return MiniLMEmbedder()


@pytest.fixture(scope="session")
def smollm2():
    """(model, tokenizer) of the embedded SmolLM2-135M-Instruct (converted once, then cached)."""
    from recallbench.metrics.perplexity import _load_default_lm

    return _load_default_lm()


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
