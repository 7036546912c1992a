"""LUFY (Sumida et al. 2024) and the LUFY-family store that Naive RAG and MemoryBank share.

``memory=lufy`` <-> ``conf/memory/lufy.yaml`` <-> :class:`Lufy`. Helpers: ``_store`` (the forgetting
store of the LUFY family), ``_entries`` (its entries and how they are written), ``_recall`` (its
retrieval and the Fig. 4 response prompt), ``_tasks`` (summary/profile prompts, the lexical
importance heuristic), ``_arousal`` (the EmoBank arousal regressor), ``_estimators`` (the L
importance prompt and the P surprise), ``_lufy`` (the method and its strength, importance and
alpha).
"""

from recallbench.memory.lufy._arousal import (
    EMOBANK_RELPATH,
    ArousalModel,
    cache_file,
    load_or_train,
    pearson,
    read_emobank,
    train_arousal,
)
from recallbench.memory.lufy._estimators import (
    IMPORTANCE_PROMPT,
    IMPORTANCE_TASK,
    offline_importance,
    parse_importance,
    unigram_surprise,
)
from recallbench.memory.lufy._lufy import (
    DEFAULT_NORMALIZATION,
    METRICS,
    PAPER_ALPHA,
    PAPER_BAND,
    PAPER_WEIGHTS,
    Lufy,
    derive_alpha,
)
from recallbench.memory.lufy._recall import RESPONSE_PROMPT
from recallbench.memory.lufy._store import (
    Entry,
    LufyFamilyMemory,
    ebbinghaus,
    retained_count,
)
from recallbench.memory.lufy._tasks import attribute, lexical_importance

__all__ = [
    "DEFAULT_NORMALIZATION",
    "EMOBANK_RELPATH",
    "IMPORTANCE_PROMPT",
    "IMPORTANCE_TASK",
    "METRICS",
    "PAPER_ALPHA",
    "PAPER_BAND",
    "PAPER_WEIGHTS",
    "RESPONSE_PROMPT",
    "ArousalModel",
    "Entry",
    "Lufy",
    "LufyFamilyMemory",
    "attribute",
    "cache_file",
    "derive_alpha",
    "ebbinghaus",
    "lexical_importance",
    "load_or_train",
    "offline_importance",
    "parse_importance",
    "pearson",
    "read_emobank",
    "retained_count",
    "train_arousal",
    "unigram_surprise",
]
