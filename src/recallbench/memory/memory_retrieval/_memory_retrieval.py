"""Memory retrieval: the top-k memory sentences most similar to the recent dialogue context.

Papers: Xu et al., "Beyond Goldfish Memory: Long-Term Open-Domain Conversation" (MSC), ACL 2022:
retrieval-augmented generation over memories of past sessions. THEANINE (Ong et al., NAACL 2025)
sec. 3.2 baseline "Memory Retrieval" (k = 6 following Xu et al., text-embedding-3-small) and its
"+ Memory Update" variant (Bae et al.'s algorithm at the end of each session). Bae et al., "Keep
Me Updated!", Findings of EMNLP 2022, sec. 4.1 / App. B.3: cosine top k = 5 over the memory
sentences with the current dialogue context D_t as the query, feeding "Memory accumulate",
"Memory update" and "Memory gold*".

Implemented: the ``SessionSummaries`` store (LLM/offline or gold per-session summaries), with
``update: true`` composing ``memory_update.MemoryUpdater`` (Algorithm 1 + Fig. 25 classifier); at
recall, the query is ``Query.question`` when present, else the last ``context_turns`` turns of the
current session; items are ranked by cosine similarity of the configured embedder and the best
``k`` are shown, best first.

Deviations:
- Embedder: the configured one (MiniLM offline, OpenAI when configured), not Bae et al.'s
  trained CPM bi-encoder nor necessarily THEANINE's text-embedding-3-small.
- The query is the last ``context_turns`` (default 3) turns rather than the whole context: the
  papers do not say how much context the retriever sees; a short window keeps the query on topic.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recallbench.embed.base import TextEmbedder
from recallbench.errors import ConfigError, DatasetFormatError
from recallbench.llm.protocol import LLMClient
from recallbench.memory._base import query_text
from recallbench.memory.all_memories import AllMemories
from recallbench.memory.blocks.bae_update import MemoryUpdater
from recallbench.memory.blocks.retrieval import top_k
from recallbench.records import Episode, MemoryItem, Query


class MemoryRetrieval(AllMemories):
    """Show the ``k`` memory sentences most similar to the recent context (Xu et al. 2022).

    Args:
        k: memories shown (THEANINE: 6, following Xu et al.; CareCall: 5).
        context_turns: turns of the current session used as the retrieval query.
        update: run Bae et al.'s memory update at the end of each session.
        thresholds: English offline-rule thresholds of the update classifier.
        offline_rule: ``auto`` | ``english`` | ``charngram`` | ``append`` (``blocks.bae_update``).
        charngram: character n-gram rule thresholds (default: fit on CareCall_mem).
        **params: ``SessionSummaries`` options (source, summarize_speakers, prompt_style, ...).
    """

    def __init__(
        self,
        llm: LLMClient,
        embedder: TextEmbedder,
        *,
        k: int = 6,
        context_turns: int = 3,
        update: bool = False,
        thresholds: Mapping[str, float] | None = None,
        offline_rule: str = "auto",
        charngram: Mapping[str, Any] | None = None,
        **params: Any,
    ) -> None:
        super().__init__(llm, embedder, **params)
        if k < 1:
            raise ConfigError(f"k must be >= 1, got {k}")
        self.k = int(k)
        self.context_turns = int(context_turns)
        if update:
            self._updater = MemoryUpdater(
                llm, embedder, thresholds, offline_rule=offline_rule, charngram=charngram
            )

    def prefetch_texts(self, episode: Episode) -> list[str]:
        """The gold memory sentences of ``episode``'s sessions (``source: gold``): what recall
        embeds unless the update rewrites them; none for summaries a model writes."""
        texts: list[str] = []
        if self.source != "gold":
            return texts
        for session in episode.sessions:
            try:
                texts += [item.text for item in self.summarize(session)]
            except DatasetFormatError:  # a session without gold memory (observe will say so)
                continue
        return texts

    def _select(self, query: Query) -> tuple[list[MemoryItem], dict[str, Any]]:
        text = query_text(query, self.context_turns)
        items, scores = top_k(self.embedder, self._items, text, self.k)
        return items, {"k": self.k, "scores": scores}
