"""The ``timerag`` memory method: writer + store + retriever + the sec. 3.5 prompt."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from recallbench.embed.base import TextEmbedder
from recallbench.errors import ConfigError
from recallbench.llm.types import LLMClient, Message
from recallbench.memory._base import MemoryMethod
from recallbench.memory._common import TIMERAG_SYSTEM, TIMERAG_USER, query_text, response_messages
from recallbench.memory.timerag._extractor import EXTRACT_TASK
from recallbench.memory.timerag._records import MemoryRecord
from recallbench.memory.timerag._store import Policy, RecordStore
from recallbench.memory.timerag._writer import Candidate, candidates, deletion_requests
from recallbench.records import Episode, MemoryItem, Query, Recall, Session
from recallbench.text import tokenize

# Sec. 3.5, verbatim (defined in memory._common, shared with baselines' prompt_style: timerag).
SYSTEM, USER = TIMERAG_SYSTEM, TIMERAG_USER
SOURCE = "TimeRAG-Memory sec. 3.5, verbatim"


def render_record(record: MemoryRecord) -> str:
    """``- [slot] speaker: value (time=t)``; `` -`` after the slot marks negative polarity."""
    slot = record.slot_type + (" -" if record.polarity == "-" else "")
    when = (
        record.timestamp.date().isoformat()
        if record.timestamp is not None
        else f"session {record.session_index}"
    )
    return f"- [{slot}] {record.speaker}: {record.value} (time={when})"


class TimeRAG(MemoryMethod):
    """Confidence-gated writing, time-aware retrieval and update/forget (TimeRAG-Memory).

    Args:
        tau: writing threshold (0.55). lambda_: decay rate per ``dt_unit`` (0.25).
        gamma: conflict penalty (0.5). k: records shown (5). budget: active records per user (40).
        retriever: ``dense`` (the configured embedder) | ``bm25``.
        writer: ``rules`` | ``llm`` (``_extractor``: a PromptTask, gated the same way).
        users: speakers whose utterances are written (None: every speaker; CareCall: the user).
        gating, update_forget, time_decay, recency_filter: the Table VIII ablations.
        Other keys: see ``Policy``.
    """

    name = "timerag"
    # What takes the constructor's ``**policy`` keys (the pre-run config checks follow it).
    KEYWORDS_TO = Policy

    def __init__(
        self,
        llm: LLMClient,
        embedder: TextEmbedder,
        *,
        k: int = 5,
        retriever: str = "dense",
        writer: str = "rules",
        context_turns: int = 3,
        users: list[str] | None = None,
        lambda_: float = 0.25,
        **policy: Any,
    ) -> None:
        if retriever not in ("dense", "bm25"):
            raise ConfigError(f"timerag: retriever must be dense or bm25, got {retriever!r}")
        if writer not in ("rules", "llm"):
            raise ConfigError(f"timerag: writer must be rules or llm, got {writer!r}")
        if k < 1:
            raise ConfigError(f"timerag: k must be >= 1, got {k}")
        try:
            self.policy = Policy(lam=float(lambda_), **policy)
        except TypeError as exc:
            raise ConfigError(f"timerag: {exc}") from None
        if self.policy.dt_unit not in ("days", "sessions"):
            raise ConfigError(
                f"timerag: dt_unit must be days or sessions, got {self.policy.dt_unit!r}"
            )
        if self.policy.conflict not in ("downweight", "overwrite"):
            raise ConfigError(
                f"timerag: conflict must be downweight or overwrite, got {self.policy.conflict!r}"
            )
        self.llm, self.embedder = llm, embedder
        self.k, self.retriever, self.writer = int(k), retriever, writer
        self.context_turns = int(context_turns)
        self.users = None if users is None else set(users)

    def reset(self, episode: Episode) -> None:
        super().reset(episode)
        self.store = RecordStore(self.policy)

    # -- writing ----------------------------------------------------------------------------

    def candidates(self, speaker: str, text: str) -> list[Candidate]:
        """The writer's candidates for one utterance (before the gate)."""
        if self.writer == "rules":
            return candidates(text)
        return list(self.llm.run(EXTRACT_TASK, speaker=speaker, utterance=text).value or [])

    def observe(self, session: Session) -> None:
        self.check_episode()
        for turn in session.turns:
            if self.users is not None and turn.speaker not in self.users:
                continue
            requests = deletion_requests(turn.text)
            for request in requests:
                self.store.delete_matching(turn.speaker, request, turn.turn_id)
            if requests:  # "forget that I live in X" must not write "live in X" again
                continue
            for cand in self.candidates(turn.speaker, turn.text):
                self.store.offer(turn.speaker, cand, turn.turn_id, session.start, session.index)
        self.store.decay(session.start, session.index)
        self.store.enforce_budget(session.start, session.index)

    # -- retrieval --------------------------------------------------------------------------

    def similarity(self, text: str) -> Callable[[list[MemoryRecord]], list[float]]:
        """``records -> sims`` for the query ``text`` (cosine, or BM25 / its best score)."""

        def dense(records: list[MemoryRecord]) -> list[float]:
            vectors = np.asarray(self.embedder.encode([r.text() for r in records]), dtype=float)
            query = np.asarray(self.embedder.encode([text])[0], dtype=float)
            norms = np.linalg.norm(vectors, axis=1) * (np.linalg.norm(query) or 1.0)
            return [float(s) for s in vectors @ query / np.where(norms == 0, 1.0, norms)]

        def bm25(records: list[MemoryRecord]) -> list[float]:
            from rank_bm25 import BM25Okapi

            corpus = [tokenize(r.text().lower(), "word") or ["_"] for r in records]
            scores = BM25Okapi(corpus).get_scores(tokenize(text.lower(), "word"))
            best = float(max(scores)) if len(scores) else 0.0
            return [float(s) / best if best > 0 else 0.0 for s in scores]

        return dense if self.retriever == "dense" else bm25

    def retrieve(self, query: Query) -> list[tuple[MemoryRecord, float]]:
        """The ranked top-``k`` records for a query (for retrieval metrics too)."""
        self.check_episode(query)
        text = query_text(query, self.context_turns)
        return self.store.retrieve(self.similarity(text), query.now, query.session_index, self.k)

    def recall(self, query: Query) -> Recall:
        ranked = self.retrieve(query)
        lines = [render_record(r) for r, _ in ranked]
        return Recall(
            tuple(r.to_item() for r, _ in ranked),
            "\n".join(lines),
            {
                "scores": [s for _, s in ranked],
                "active": len(self.store.active()),
                "records": len(self.store.records),
            },
        )

    def prompt(self, query: Query, recall: Recall) -> list[Message]:
        return response_messages("timerag", recall.text, query)

    def snapshot(self) -> list[MemoryItem]:
        """Every record with its status (deleted and decayed ones too: the audit trail)."""
        return [r.to_item() for r in self.store.records]
