"""THEANINE "All Memories + Memory Update" (Bae et al. 2022, Algorithm 1, without retrieval).

The method (``memory=memory_update``, ``conf/memory/memory_update.yaml``) is in
``_memory_update``; this package is also the public face of Bae et al.'s building blocks
(``memory.blocks.bae_update``) for the ``memory_ops`` protocol and the CareCall scripts.
"""

from recallbench.memory.blocks.bae_update import (
    CHARNGRAM_DEFAULTS,
    CHARNGRAM_FIT,
    GRID,
    OFFLINE_RULES,
    TO_ALGORITHM1,
    MemoryUpdater,
    Transition,
    algorithm1,
    fit_charngram,
    set_f1,
    set_prf,
    transitions,
    update_texts,
)
from recallbench.memory.blocks.bae_update import FIT_ON as ENGLISH_FIT_ON
from recallbench.memory.blocks.bae_update import NAMES as OP_NAMES
from recallbench.memory.memory_update._memory_update import MemoryUpdate

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
