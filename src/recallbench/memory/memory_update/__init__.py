"""THEANINE "All Memories + Memory Update" (Bae et al. 2022, Algorithm 1, without retrieval).

The method (``memory=memory_update``, ``conf/memory/memory_update.yaml``) is in ``_memory_update``.
"""

from recallbench.memory.memory_update._memory_update import (
    CHARNGRAM_DEFAULTS,
    CHARNGRAM_FIT,
    ENGLISH_FIT_ON,
    GRID,
    OFFLINE_RULES,
    OP_NAMES,
    TO_ALGORITHM1,
    MemoryUpdate,
    MemoryUpdater,
    Transition,
    algorithm1,
    fit_charngram,
    set_f1,
    set_prf,
    transitions,
    update_texts,
)

__all__ = [
    "CHARNGRAM_DEFAULTS",
    "CHARNGRAM_FIT",
    "ENGLISH_FIT_ON",
    "GRID",
    "MemoryUpdate",
    "MemoryUpdater",
    "OFFLINE_RULES",
    "OP_NAMES",
    "TO_ALGORITHM1",
    "Transition",
    "algorithm1",
    "fit_charngram",
    "set_f1",
    "set_prf",
    "transitions",
    "update_texts",
]
