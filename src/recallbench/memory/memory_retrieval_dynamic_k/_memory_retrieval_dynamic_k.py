"""Memory Retrieval with a dynamic k: k matched per test instance to THEANINE's memory count.

Paper: Ong et al., "Towards Lifelong Dialogue Agents via Timeline-based Memory Management"
(THEANINE), NAACL 2025, sec. 6 "Additional comparison" / Table 5: "k dynamically changes based on
the number of collected memories in THEANINE for each specific test data", i.e. when THEANINE's
timelines collect k memories for a dialogue context D_i, Memory Retrieval (Xu et al., 2022)
retrieves the top k memories for D_i.

Implemented: ``MemoryRetrieval`` composed with an internal ``Theanine`` that is fed the very same
per-session memories (one summarization, so both graphs hold identical memories) and builds its
memory graph (Phase I linking). At recall, THEANINE's Phase II-1 (top-k retrieval + one seeded
timeline per retrieved memory, no refinement) gives the number of distinct collected memories,
and that many memories are retrieved by cosine similarity with Memory Retrieval's own query.

Deviations:
- The internal THEANINE's linking calls are made by this method (task ``theanine.link_relation``,
  cached when the generator has a cache), so its cost includes THEANINE's graph construction;
  the paper reuses the counts of its THEANINE runs. With the same seed, generator and embedder,
  the count equals the ``n_collected`` recorded by the ``theanine`` run for the same instance.
- With ``update: true`` (Table 5 "+ Memory Update") Bae et al.'s update edits the retrieval store
  only; the internal THEANINE keeps every memory, as THEANINE does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recallbench.embed.base import TextEmbedder
from recallbench.llm.protocol import LLMClient
from recallbench.memory._base import query_text
from recallbench.memory.blocks.retrieval import top_k
from recallbench.memory.memory_retrieval import MemoryRetrieval
from recallbench.memory.theanine import Theanine
from recallbench.records import Episode, MemoryItem, Query, Session


class MemoryRetrievalDynamicK(MemoryRetrieval):
    """Top-k memory retrieval whose k is THEANINE's collected-memory count for the query.

    Args:
        theanine: options of the internal ``Theanine`` (j, k, n, linking, seed, context_turns,
            ...); its summarization options are this method's own.
        min_k: k used when THEANINE collects nothing (e.g. before any memory exists).
        **params: ``MemoryRetrieval`` options (context_turns, update, source, ...); ``k`` is
            ignored (it is chosen per instance).
    """

    def __init__(
        self,
        llm: LLMClient,
        embedder: TextEmbedder,
        *,
        theanine: Mapping[str, Any] | None = None,
        min_k: int = 1,
        **params: Any,
    ) -> None:
        params.pop("k", None)
        super().__init__(llm, embedder, **params)
        summary_keys = ("source", "gold_key", "summarize_speakers", "max_sentences", "min_words")
        shared = {key: params[key] for key in summary_keys if key in params}
        self.theanine = Theanine(llm, embedder, **{**dict(theanine or {}), **shared})
        self.min_k = int(min_k)

    def reset(self, episode: Episode) -> None:
        """Start ``episode`` for both the retrieval store and the internal THEANINE."""
        self.theanine.reset(episode)
        super().reset(episode)

    def _integrate(self, new: list[MemoryItem]) -> None:
        self.theanine.add_memories(list(new))
        super()._integrate(new)

    def _write(self, session: Session) -> None:
        self.theanine.add_turns(session)
        super()._write(session)

    def _select(self, query: Query) -> tuple[list[MemoryItem], dict[str, Any]]:
        k = self.theanine.n_collected(query) or self.min_k
        items, scores = top_k(self.embedder, self._items, query_text(query, self.context_turns), k)
        return items, {"k": k, "k_source": "theanine.n_collected", "scores": scores}
