"""The ``timerag`` memory method: writer + store + retriever + the sec. 3.5 prompt."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from recallbench.embed.base import TextEmbedder
from recallbench.errors import ConfigError
from recallbench.llm.protocol import LLMClient
from recallbench.llm.types import Message
from recallbench.memory._base import MemoryMethod, query_text
from recallbench.memory.blocks.prompts import TIMERAG_SYSTEM, TIMERAG_USER, response_messages
from recallbench.memory.timerag._extractor import EXTRACT_TASK
from recallbench.memory.timerag._profile import profile_candidates
from recallbench.memory.timerag._records import MemoryRecord, record_text
from recallbench.memory.timerag._store import Policy, RecordStore
from recallbench.memory.timerag._writer import Candidate, candidates, deletion_requests
from recallbench.records import Episode, MemoryItem, Query, Recall, Session, Turn
from recallbench.text import tokenize

# Sec. 3.5, verbatim (defined in memory.blocks.prompts, shared with baselines' prompt_style: timerag).
SYSTEM, USER = TIMERAG_SYSTEM, TIMERAG_USER
SOURCE = "TimeRAG-Memory sec. 3.5, verbatim"
SIM_TEXTS = ("value", "record")


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
        profile_speakers: speakers whose turns are the user's own documents (LaMP-1's
            ``profile``), written by the profile writer (``_profile``) instead of the templates.
        write_during_session: write each turn as the dialogue streams (sec. 3.2): a recall first
            writes the turns of its history not yet written, so facts of the current session
            are retrievable; False writes a session only once it ended (``observe``).
        sim_text: what ``phi(m)`` embeds: ``value`` (sec. 3.3, "memory values") or ``record``
            (speaker, slot words and value).
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
        profile_speakers: Sequence[str] | None = ("profile",),
        write_during_session: bool = True,
        sim_text: str = "value",
        lambda_: float = 0.25,
        **policy: Any,
    ) -> None:
        if retriever not in ("dense", "bm25"):
            raise ConfigError(f"timerag: retriever must be dense or bm25, got {retriever!r}")
        if writer not in ("rules", "llm"):
            raise ConfigError(f"timerag: writer must be rules or llm, got {writer!r}")
        if k < 1:
            raise ConfigError(f"timerag: k must be >= 1, got {k}")
        if sim_text not in SIM_TEXTS:
            raise ConfigError(f"timerag: sim_text must be value or record, got {sim_text!r}")
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
        if self.policy.conflict_scope not in ("all", "eligible"):
            raise ConfigError(
                "timerag: conflict_scope must be all or eligible, got "
                f"{self.policy.conflict_scope!r}"
            )
        self.llm, self.embedder = llm, embedder
        self.k, self.retriever, self.writer = int(k), retriever, writer
        self.context_turns = int(context_turns)
        self.users = None if users is None else set(users)
        self.profile_speakers = set(profile_speakers or ())
        self.write_during_session = bool(write_during_session)
        self.sim_text = sim_text

    def reset(self, episode: Episode) -> None:
        super().reset(episode)
        self.store = RecordStore(self.policy)
        self.written: set[str] = set()  # ids of the turns already offered to the writer

    # -- writing ----------------------------------------------------------------------------

    def candidates(self, speaker: str, text: str) -> list[Candidate]:
        """The writer's candidates for one utterance (before the gate)."""
        if self.writer == "rules":
            return candidates(text)
        return list(self.llm.run(EXTRACT_TASK, speaker=speaker, utterance=text).value or [])

    def write(self, turns: Sequence[Turn], when: datetime | None, session_index: int) -> int:
        """Offer the turns not written yet to the writer; return how many were new."""
        new = [t for t in turns if t.turn_id not in self.written]
        for turn in new:
            self.written.add(turn.turn_id)
            requests, offers = self._offers(turn)
            for request in requests:
                self.store.delete_matching(turn.speaker, request, turn.turn_id)
            for cand in offers:
                self.store.offer(turn.speaker, cand, turn.turn_id, when, session_index)
        return len(new)

    def _offers(self, turn: Turn) -> tuple[list[str], list[Candidate]]:
        """(the deletion requests, the candidates offered to the gate) of one turn."""
        if turn.speaker in self.profile_speakers:
            return [], profile_candidates(turn)
        if self.users is not None and turn.speaker not in self.users:
            return [], []
        if requests := deletion_requests(turn.text):
            return requests, []  # "forget that I live in X" must not write "live in X" again
        return [], self.candidates(turn.speaker, turn.text)

    def prefetch_texts(self, episode: Episode) -> list[str]:
        """``phi`` of every candidate the rules writer offers for ``episode``'s turns: a
        superset of what recall embeds (the gate and forgetting drop some); none for BM25 or
        the LLM writer (its candidates are model output)."""
        if self.retriever != "dense" or self.writer != "rules":
            return []
        return [
            c.value
            if self.sim_text == "value"
            else record_text(t.speaker, c.slot_type, c.polarity, c.value)
            for s in episode.sessions
            for t in s.turns
            for c in self._offers(t)[1]
        ]

    def query_texts(self, queries: Sequence[Query]) -> Sequence[str]:
        """The retrieval texts (``query_text``) for the dense retriever; BM25 embeds none."""
        return super().query_texts(queries) if self.retriever == "dense" else ()

    def observe(self, session: Session) -> None:
        self.check_episode()
        self.write(session.turns, session.start, session.index)
        self.store.decay(session.start, session.index)
        self.store.enforce_budget(session.start, session.index)

    # -- retrieval --------------------------------------------------------------------------

    def similarity(self, text: str) -> Callable[[list[MemoryRecord]], list[float]]:
        """``records -> sims`` for the query ``text`` (cosine, or BM25 / its best score)."""

        def phi(record: MemoryRecord) -> str:
            return record.value if self.sim_text == "value" else record.text()

        def dense(records: list[MemoryRecord]) -> list[float]:
            vectors = np.asarray(self.embedder.encode([phi(r) for r in records]), dtype=float)
            query = np.asarray(self.embedder.encode([text])[0], dtype=float)
            norms = np.linalg.norm(vectors, axis=1) * (np.linalg.norm(query) or 1.0)
            return [float(s) for s in vectors @ query / np.where(norms == 0, 1.0, norms)]

        def bm25(records: list[MemoryRecord]) -> list[float]:
            from rank_bm25 import BM25Okapi

            corpus = [tokenize(phi(r).lower(), "word") or ["_"] for r in records]
            scores = BM25Okapi(corpus).get_scores(tokenize(text.lower(), "word"))
            best = float(max(scores)) if len(scores) else 0.0
            return [float(s) / best if best > 0 else 0.0 for s in scores]

        return dense if self.retriever == "dense" else bm25

    def retrieve(self, query: Query) -> list[tuple[MemoryRecord, float]]:
        """The ranked top-``k`` records for a query (for retrieval metrics too); with
        ``write_during_session`` the query's history is written first (the dialogue stream)."""
        self.check_episode(query)
        if self.write_during_session and self.write(query.history, query.now, query.session_index):
            self.store.decay(query.now, query.session_index)
            self.store.enforce_budget(query.now, query.session_index)
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
