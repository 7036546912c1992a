"""THEANINE "All Memories + Memory Update" (Bae et al. 2022, Algorithm 1, without retrieval).

The classifier, its prompt (THEANINE Fig. 25, verbatim), the offline rules and Algorithm 1 live
in ``memory/blocks/bae_update/`` (shared with ``memory_retrieval`` and ``session_summaries``), the
character n-gram rule in ``_charops``; see their docstrings for the paper, the label mapping and
the deviations. The package (``memory_update/__init__``) is also the public face of the
memory-operation building blocks (``transitions``, ``set_f1``, ``fit_charngram``, ...) for the
``memory_ops`` protocol.

Refit the character n-gram rule's defaults (``CHARNGRAM_DEFAULTS``) on a CareCall_mem file:
``python scripts/fit_charngram.py <data_dir> [file]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recallbench.embed.base import TextEmbedder
from recallbench.llm.protocol import LLMClient
from recallbench.memory.all_memories import AllMemories
from recallbench.memory.blocks.bae_update import MemoryUpdater


class MemoryUpdate(AllMemories):
    """THEANINE "All Memories + Memory Update" / Bae et al. "Memory update" without retrieval.

    Args:
        thresholds: English offline-rule thresholds (see ``DEFAULT_THRESHOLDS``).
        offline_rule: ``auto`` | ``english`` | ``charngram`` | ``append``.
        charngram: character n-gram rule thresholds (default ``CHARNGRAM_DEFAULTS``).
        **params: ``SessionSummaries`` options (source, summarize_speakers, prompt_style, ...).
    """

    def __init__(
        self,
        llm: LLMClient,
        embedder: TextEmbedder,
        *,
        thresholds: Mapping[str, float] | None = None,
        offline_rule: str = "auto",
        charngram: Mapping[str, Any] | None = None,
        **params: Any,
    ) -> None:
        super().__init__(llm, embedder, **params)
        self._updater = MemoryUpdater(
            llm, embedder, thresholds, offline_rule=offline_rule, charngram=charngram
        )
