"""Bae et al.'s Algorithm 1 as one building block (Findings of EMNLP 2022, sec. 4.3).

``_algorithm1``: the new memory M' from pairwise operations; ``_update``: the pairwise
classifier (THEANINE Fig. 25 as a PromptTask) and ``MemoryUpdater``; ``_english_ops`` and
``_charops``: its offline rules (English stems + cosine; character n-grams fit on CareCall_mem
transitions). Used by the methods ``memory_update``, ``memory_retrieval`` (``update: true``) and
``session_summaries``, and through ``memory_update`` by the ``memory_ops`` protocol.
"""

from recallbench.memory.blocks.bae_update._algorithm1 import NAMES, algorithm1, update_texts
from recallbench.memory.blocks.bae_update._charops import (
    CHARNGRAM_DEFAULTS,
    CHARNGRAM_FIT,
    GRID,
    Transition,
    fit_charngram,
    set_f1,
    set_prf,
    transitions,
)
from recallbench.memory.blocks.bae_update._english_ops import DEFAULT_THRESHOLDS, FIT_ON
from recallbench.memory.blocks.bae_update._update import (
    LABELS,
    OFFLINE_RULES,
    TO_ALGORITHM1,
    UPDATE_PROMPT,
    MemoryUpdater,
    operation_task,
    parse_operation,
)

__all__ = [
    "CHARNGRAM_DEFAULTS",
    "CHARNGRAM_FIT",
    "DEFAULT_THRESHOLDS",
    "FIT_ON",
    "GRID",
    "LABELS",
    "NAMES",
    "OFFLINE_RULES",
    "TO_ALGORITHM1",
    "UPDATE_PROMPT",
    "MemoryUpdater",
    "Transition",
    "algorithm1",
    "fit_charngram",
    "operation_task",
    "parse_operation",
    "set_f1",
    "set_prf",
    "transitions",
    "update_texts",
]
