"""RSum-LLM: a memory pool recursively rewritten by the LLM after every session, no retrieval.

The method (``memory=rsum_llm``, ``conf/memory/rsum_llm.yaml``) is in ``_rsum_llm``.
"""

from recallbench.memory.rsum_llm._rsum_llm import RSumLLM, parse_memory

__all__ = [
    "RSumLLM",
    "parse_memory",
]
