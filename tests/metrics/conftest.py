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
    from recallbench.llm.perplexity import load_default_lm

    return load_default_lm()
