"""Mem0 (mem0ai, in-process) as a memory method: ``memory=mem0`` (see ``_mem0`` for what is Mem0's
and what is ours).
"""

from recallbench.memory.mem0._adapters import EXTRACT_TASK, Mem0Embedder, Mem0LLM
from recallbench.memory.mem0._mem0 import LOCOMO_INSTRUCTIONS, Mem0Memory, build_memory

__all__ = [
    "EXTRACT_TASK",
    "LOCOMO_INSTRUCTIONS",
    "Mem0Embedder",
    "Mem0LLM",
    "Mem0Memory",
    "build_memory",
]
