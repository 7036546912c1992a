"""Memory Retrieval with a dynamic k: k matched per test instance to THEANINE's memory count.

The method (``memory=memory_retrieval_dynamic_k``, ``conf/memory/memory_retrieval_dynamic_k.yaml``)
is in ``_memory_retrieval_dynamic_k``.
"""

from recallbench.memory.memory_retrieval_dynamic_k._memory_retrieval_dynamic_k import (
    MemoryRetrievalDynamicK,
)

__all__ = [
    "MemoryRetrievalDynamicK",
]
