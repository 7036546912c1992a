"""LLM layer: PromptTasks, backends (extractive, openai, hf), SQLite cache, usage and cost.

    from recallbench.llm import LLM, PromptTask, TaskResult, build_llm
    llm = build_llm({"backend": "extractive"}, cache_path=None)
    result = llm.run(task, **fields)

The contract: ``LLMClient`` (``llm/protocol.py``) and docs/architecture.md, "Seams".
"""

from __future__ import annotations

from recallbench.llm.backends import ExtractiveBackend, HFBackend, OpenAIBackend, TokenBucket
from recallbench.llm.backends.hf import load_causal_lm, load_tokenizer
from recallbench.llm.cache import Cache, cache_key
from recallbench.llm.calls import CircuitBreaker
from recallbench.llm.client import LLM
from recallbench.llm.config import build_llm, from_config
from recallbench.llm.prices import PRICES_AS_OF, PRICES_SOURCE, Price, PriceTable
from recallbench.llm.protocol import LLMClient
from recallbench.llm.task import CALL_FAILURE, PARSE_FAILURE, ParseError, PromptTask, TaskResult
from recallbench.llm.types import Backend, BackendCallError, Completion, Decoding
from recallbench.llm.usage import Bucket, Usage

__all__ = [
    "LLM",
    "LLMClient",
    "Backend",
    "BackendCallError",
    "Bucket",
    "CALL_FAILURE",
    "Cache",
    "CircuitBreaker",
    "Completion",
    "Decoding",
    "ExtractiveBackend",
    "HFBackend",
    "OpenAIBackend",
    "PARSE_FAILURE",
    "PRICES_AS_OF",
    "PRICES_SOURCE",
    "ParseError",
    "Price",
    "PriceTable",
    "PromptTask",
    "TaskResult",
    "TokenBucket",
    "Usage",
    "build_llm",
    "from_config",
    "cache_key",
    "load_causal_lm",
    "load_tokenizer",
]
