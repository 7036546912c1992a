"""Gold memory: the dataset's own memory for each session (an upper bound).

Paper: Bae et al., "Keep Me Updated! Memory Management in Long-term Conversations", Findings of
EMNLP 2022, sec. 5.2 "Memory gold*": "M for each session is gold memory in the dataset. This
serves as the upper limit for memory management mechanism."

Implemented: for a query in session k, the memory is ``Session.gold["memory"]`` of session k
itself. CareCall_mem defines that field as the memory BEFORE the session: the human-validated
result of updating memory with the summaries of sessions 1..k-1 (SOURCE.md: "memory about the
user BEFORE this session"). Reading it is the only peek this method makes, and it is not a leak:
its content is a function of sessions 1..k-1, all observed before session k starts; it carries no
turn, summary or answer of session k or later. ``reset`` keeps only these per-session memory lists
(no dialogue). Items get ``source_ids`` = the observed turns of sessions < k (we do not know
which turns each sentence came from) and ``created`` = session k's start. With ``k`` set, the top
k by cosine similarity with the recent context are shown (Bae et al.'s system retrieves k = 5
from M, sec. 4.1); otherwise all. ``snapshot`` is the gold memory after the last observed
session (session k+1's field), or the latest one when the episode has no later session.

Deviations:
- Bae et al. feed the gold memory to their fine-tuned generator; we prompt the configured one.
"""

from __future__ import annotations

from typing import Any

from recallbench.datasets import needs
from recallbench.embed.base import TextEmbedder
from recallbench.errors import ConfigError, DatasetFormatError
from recallbench.llm.protocol import LLMClient
from recallbench.memory._base import query_text
from recallbench.memory.blocks.baseline import BaselineMethod, render_flat
from recallbench.memory.blocks.prompts import PromptStyle
from recallbench.memory.blocks.retrieval import top_k
from recallbench.records import Episode, MemoryItem, Query, Recall


class GoldMemory(BaselineMethod):
    """The dataset's memory before the current session (Bae et al. 2022 "Memory gold*").

    Args:
        gold_key: the ``Session.gold`` field holding the memory before the session.
        k: show the top k memories by similarity (``None``: all; CareCall system: 5).
        context_turns: turns of the current session used as the retrieval query.
        prompt_style: ``carecall`` (default) or ``theanine``.
    """

    def __init__(
        self,
        llm: LLMClient,
        embedder: TextEmbedder,
        *,
        gold_key: str = "memory",
        k: int | None = None,
        context_turns: int = 3,
        prompt_style: PromptStyle = "carecall",
    ) -> None:
        super().__init__(llm, embedder, prompt_style=prompt_style)
        if k is not None and k < 1:
            raise ConfigError(f"k must be >= 1 or null, got {k}")
        self.gold_key = gold_key
        self.k = k
        self.context_turns = int(context_turns)
        self._gold: dict[int, tuple[str, Any, tuple[str, ...]]] = {}

    def needs(self) -> frozenset[str]:
        """The dataset's own memory of every session (``Session.gold[gold_key]``)."""
        return frozenset({needs.gold(self.gold_key)})

    def reset(self, episode: Episode) -> None:
        """Start ``episode``; keep each session's gold memory list (and nothing else of it)."""
        super().reset(episode)
        self._gold = {
            s.index: (s.session_id, s.start, self._read(episode, s)) for s in episode.sessions
        }

    def _read(self, episode: Episode, session: Any) -> tuple[str, ...]:
        where = f"episode {episode.episode_id} session {session.session_id}"
        if self.gold_key not in session.gold:
            raise DatasetFormatError(
                f"{where}: gold {self.gold_key!r} missing (gold keys: {sorted(session.gold)}); "
                "gold_memory needs a dataset with per-session memory (CareCall_mem)"
            )
        value = session.gold[self.gold_key]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise DatasetFormatError(
                f"{where}: gold {self.gold_key!r} must be a list of str, got {value!r:.80}"
            )
        return tuple(v.strip() for v in value if v.strip())

    def _items(self, index: int) -> list[MemoryItem]:
        session_id, start, sentences = self._gold[index]
        sources = self.observed_ids(before=index)
        return [
            MemoryItem(
                item_id=f"{session_id}/gold{j}",
                text=text,
                kind="fact",
                created=start,
                source_ids=sources,
                attrs={"session": index, "writer": "gold"},
            )
            for j, text in enumerate(sentences)
        ]

    def recall(self, query: Query) -> Recall:
        """Return the gold memory of the query's session (top k when ``k`` is set)."""
        self.check_episode(query)
        if query.session_index not in self._gold:
            raise ValueError(
                f"GoldMemory: episode {self.episode_id} has no session {query.session_index} "
                f"(sessions: {sorted(self._gold)})"
            )
        items = self._items(query.session_index)
        info: dict[str, Any] = {"method": "GoldMemory", "store_size": len(items)}
        if self.k is not None:
            items, info["scores"] = top_k(
                self.embedder, items, query_text(query, self.context_turns), self.k
            )
            info["k"] = self.k
        return Recall(tuple(items), render_flat(items), info)

    def snapshot(self) -> list[MemoryItem]:
        """Return the gold memory after the last observed session (latest available)."""
        if not self._observed:
            return []
        upto = max(self._observed) + 1
        known = [index for index in self._gold if index <= upto]
        return self._items(max(known)) if known else []
