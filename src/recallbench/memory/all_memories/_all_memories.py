"""All memories so far go into the prompt (no selection, no update).

Papers: THEANINE baseline "All Memories & Current Context" (Ong et al., NAACL 2025, sec. 3.2 /
Table 1): every memory sentence summarized from past sessions plus the current dialogue context
D. Bae et al., "Keep Me Updated! Memory Management in Long-term Conversations", Findings of
EMNLP 2022, sec. 5.2 "Memory accumulate": memory management with APPEND as the only pairwise
operation, i.e. the memory is the union of all session summaries.

Implemented: ``SessionSummaries`` (per-session summarization, LLM/offline or gold) with the memory
rendered as a flat list of sentences in store order (oldest first) inside the response prompt.

Deviations:
- Bae et al.'s full system also retrieves the top k = 5 memory sentences before generation
  (sec. 4.1); that variant is ``memory_retrieval`` with ``update: false``
  (``conf/memory/all_memories_carecall.yaml``). This class shows all memories, as THEANINE does.
- See ``session_summaries`` for the summarization deviations.
"""

from __future__ import annotations

from recallbench.memory.blocks.baseline import render_flat
from recallbench.memory.session_summaries import SessionSummaries
from recallbench.records import MemoryItem


class AllMemories(SessionSummaries):
    """Every memory sentence of every observed session, one per line (THEANINE, Bae et al.)."""

    def _render(self, items: list[MemoryItem]) -> str:
        return render_flat(items)
