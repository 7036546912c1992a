"""Memory retrieval: the top-k memory sentences most similar to the recent dialogue context.

The method (``memory=memory_retrieval``, ``conf/memory/memory_retrieval.yaml``) is in
``_memory_retrieval``.
"""

from recallbench.memory.memory_retrieval._memory_retrieval import MemoryRetrieval

__all__ = [
    "MemoryRetrieval",
]
