"""MemoryBank's forgetting curve as the LUFY paper's baseline.

The method (``memory=memorybank``, ``conf/memory/memorybank.yaml``) is in ``_memorybank``.
"""

from recallbench.memory.memorybank._memorybank import MemoryBank

__all__ = [
    "MemoryBank",
]
