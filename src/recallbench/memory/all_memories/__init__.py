"""All memories so far go into the prompt (no selection, no update).

The method (``memory=all_memories``, ``conf/memory/all_memories.yaml``) is in ``_all_memories``.
"""

from recallbench.memory.all_memories._all_memories import AllMemories

__all__ = [
    "AllMemories",
]
