"""THEANINE "All Memories + Memory Update" (Bae et al. 2022, Algorithm 1, without retrieval).

The classifier, its prompt (THEANINE Fig. 25, verbatim), the offline rule and Algorithm 1 live in
``memory/_update.py`` (shared with ``memory_retrieval`` and ``session_summaries``); see its
docstring for the paper, the label mapping and the deviations.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recallbench.memory._update import MemoryUpdater
from recallbench.memory.all_memories import AllMemories


class MemoryUpdate(AllMemories):
    """THEANINE "All Memories + Memory Update" / Bae et al. "Memory update" without retrieval.

    Args:
        thresholds: offline-rule thresholds (see ``DEFAULT_THRESHOLDS``).
        **params: ``SessionSummaries`` options (source, summarize_speakers, prompt_style, ...).
    """

    def __init__(
        self, llm: Any, embedder: Any, *, thresholds: Mapping | None = None, **params: Any
    ) -> None:
        super().__init__(llm, embedder, **params)
        self._updater = MemoryUpdater(llm, embedder, thresholds)
