"""LLM backends, one module each: ``extractive`` (no LLM), ``openai`` (any OpenAI-compatible
server), ``hf`` (a local transformers causal LM) and ``gguf`` (the embedded SmolLM2 file and its
tokenizer). Each implements ``recallbench.llm.types.Backend``.
"""

from recallbench.llm.backends.extractive import ExtractiveBackend
from recallbench.llm.backends.hf import HFBackend
from recallbench.llm.backends.openai import OpenAIBackend, TokenBucket

__all__ = ["ExtractiveBackend", "HFBackend", "OpenAIBackend", "TokenBucket"]
