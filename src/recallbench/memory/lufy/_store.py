"""The memory store shared by the LUFY family: Naive RAG, MemoryBank and LUFY.

Paper: Sumida, Inoue and Kawahara, "Enhancing Long-term RAG Chatbots with Psychological Models of
Memory Importance and Forgetting" (LUFY), JAIR 2025 / arXiv 2409.12524, sec. 2 and 4.

An episode's state is one typed ``_entries.EntryStore`` (``LufyFamilyMemory.store``); entries are
written by the functions of ``_entries``, retrieval and the response prompt are the functions of
``_recall``; the method passes them its collaborators and settings.

Implemented (sec. 4.1.1, 4.2, Table 3, Fig. 4):
- Three kinds of memory: ``profile`` (one item per fact about the user, refined after every
  session by a PromptTask, never forgotten; it is the "Key Summary" of the response prompt),
  ``summary`` (one per session) and ``utterance_pair`` (a user turn with the turn before it,
  user turn id first in ``source_ids``), the last two embedded with the configured embedder and
  subject to forgetting. Summaries and profile facts name the turns they quote in
  ``source_ids`` (matched text); an abstractive summary names its whole session, an abstractive
  profile fact names none (its source is unknown).
- Retrieval: candidates with cosine >= ``threshold`` (0.8) are ranked by cosine plus a method
  bonus (LUFY: alpha * importance); the top 2 are taken. R1 (rank 1) is shown to the generator
  and gets ``R1 += 1`` and its access time reset; R2 (rank 2) is retrieved but not shown and
  gets ``R2 += 1`` (sec. 2, retrieval-induced forgetting). A ``Query`` with ``question`` set is
  an evaluation probe: nothing changes. The query is the question, else the last turn (the
  user's utterance the bot answers). ``answer_prompt_fields`` gives QA answering the profile
  and the R1 memory, as the chatbot's own prompt has them.
- Forgetting after every session (inside ``observe``): forgettable memories are ranked by the
  method's importance and the top ``retain_ratio`` (10%) of all memories created so far are
  kept, rounded to the nearest whole number, halves up (sec. 4.2: 14 memories -> 1 kept).
- Time: ``dt`` is in days of simulated time (``Session.start``; LUFY sessions are consecutive
  days, ``clock.LUFY_GAP``). Memories written for a session are stamped with its start; the
  forgetting step evaluates importance ``forget_horizon_days`` (1) later, i.e. one time step
  after the session, as the paper's weight fit assumes (sec. 3.4, dt = 1).

Deviations:
- Live writes: the released system inserts every utterance pair as soon as it is said. Here a
  non-probe ``recall`` writes the pairs of ``query.history`` that lie before its last
  ``recent_turns`` turns (which the prompt shows anyway), so a turn is never retrieved for
  itself; ``observe`` writes the rest.
- Tie-break in forgetting: equal importance (common in MemoryBank, where most memories share
  S = 1 and dt) keeps the more recently created memory; retrieval ties keep the older memory.
- The paper prints no prompt for session summaries and the profile: ours are in ``_tasks.py``.
- A session without a start time is placed ``index - 1`` days after ``clock.EPOCH``.
- Threshold scale: 0.8 suits text-embedding-ada-002, whose cosines crowd into [0.7, 1]. With
  MiniLM no LUFY user utterance reaches 0.8 against the stored memories (best match: median
  0.32, 95th percentile 0.59), so nothing is ever retrieved. Each embedder config declares its
  calibrated threshold (``conf/embedder``: MiniLM 0.5 retrieves for 15% of bot replies),
  measured by ``recallbench.papers.lufy.calibration``; an uncalibrated one (None) is refused.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal

from recallbench.clock import EPOCH
from recallbench.embed.base import TextEmbedder
from recallbench.errors import ConfigError
from recallbench.llm.protocol import LLMClient
from recallbench.memory._base import MemoryMethod, Message, render_history
from recallbench.memory.lufy._entries import (
    Entry,
    EntryStore,
    Pair,
    infer_user,
    refine_profile,
    session_time,
    user_pairs,
    write_pairs,
    write_summary,
)
from recallbench.memory.lufy._recall import (
    answer_fields,
    count_retrievals,
    episode_texts,
    live_history,
    recall_info,
    recall_texts,
    response_messages,
    retrieval_text,
    retrieve,
)
from recallbench.records import Episode, MemoryItem, Query, Recall, Session
from recallbench.store import JSONValue

FORGETTABLE = ("utterance_pair", "summary")


def retained_count(created: int, ratio: float) -> int:
    """Return how many of ``created`` memories to keep: ratio * created, nearest, halves up."""
    exact = Decimal(str(ratio)) * created  # Decimal: 0.1 * 15 is exactly 1.5, rounds to 2
    return int(exact.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def ebbinghaus(dt_days: float, strength: float, *, upstream: bool = False) -> float:
    """Importance e^(-dt/S) (LUFY Eq. 1/3); ``upstream``: MemoryBank code's exp(-t / 5*S).

    Python parses MemoryBank's ``math.exp(-t / 5*S)`` as exp(-(t/5)*S): a stronger memory
    decays faster (open upstream issue). Kept as an opt-in switch for comparison.
    """
    if upstream:
        return math.exp(-dt_days / 5 * strength)
    return math.exp(-dt_days / strength)


class LufyFamilyMemory(MemoryMethod):
    """Profile + summaries + utterance pairs, threshold/top-2 retrieval, top-10% forgetting.

    Args:
        llm: the LLM facade (summary, profile and, for LUFY, importance tasks).
        embedder: embeds pairs, summaries and queries.
        threshold: minimum cosine similarity of a retrieved memory (LUFY sec. 4.1.1: 0.8).
        top_k: memories retrieved per query (2: R1 shown, R2 counted, sec. 2).
        retain_ratio: fraction of created memories kept by forgetting (0.1, sec. 4.2).
        forgetting: run forgetting after each session (off for Naive RAG).
        recent_turns: turns shown as "Recent Utterances" (5, sec. 4.1.2).
        live_writes: write past pairs of the current session at recall time (module docstring).
        summaries, profile: keep session summaries / the profile.
        profile_in_recall: show the profile (Key Summary) with the recalled memory.
        forget_horizon_days: time between a session and its forgetting evaluation.
        user_speaker: the user's speaker name; None: ``Episode.meta["user"]`` or inferred.
    """

    name = "lufy_family"
    forgets = True

    def __init__(
        self,
        llm: LLMClient,
        embedder: TextEmbedder,
        *,
        threshold: float | None = 0.8,
        top_k: int = 2,
        retain_ratio: float = 0.1,
        forgetting: bool | None = None,
        recent_turns: int = 5,
        live_writes: bool = True,
        summaries: bool = True,
        profile: bool = True,
        profile_in_recall: bool = True,
        forget_horizon_days: float = 1.0,
        user_speaker: str | None = None,
    ) -> None:
        if threshold is None:
            raise ConfigError(
                f"{type(self).__name__}: no retrieval threshold for embedder "
                f"{embedder.name!r}: conf/memory/_cosine_cut.yaml has no calibrated "
                "cut-off for its scale. Measure one (python scripts/calibrate_cosine.py "
                "<embedder>) and set memory.threshold=<cosine>"
            )
        if not -1.0 <= threshold <= 1.0:
            raise ConfigError(f"threshold must be a cosine in [-1, 1], got {threshold}")
        if top_k < 1:
            raise ConfigError(f"top_k must be >= 1, got {top_k}")
        if not 0.0 < retain_ratio <= 1.0:
            raise ConfigError(f"retain_ratio must be in (0, 1], got {retain_ratio}")
        self.llm, self.embedder = llm, embedder
        self.threshold, self.top_k, self.retain_ratio = float(threshold), int(top_k), retain_ratio
        self.forgetting = self.forgets if forgetting is None else bool(forgetting)
        self.recent_turns, self.live_writes = int(recent_turns), bool(live_writes)
        self.summaries, self.profile, self.profile_in_recall = summaries, profile, profile_in_recall
        self.horizon = timedelta(days=float(forget_horizon_days))
        self.user_speaker = user_speaker
        self.store = EntryStore(user=user_speaker or "")

    # -- method hooks (overridden by Naive RAG, MemoryBank, LUFY) -------------------------

    def strength(self, entry: Entry) -> float:
        """Return the memory strength S (MemoryBank: 1 + times recalled)."""
        return 1.0 + entry.r1

    def importance(self, entry: Entry, now: datetime) -> float:
        """Return the importance of ``entry`` at ``now`` (Ebbinghaus e^(-dt/S))."""
        return ebbinghaus(self.dt_days(entry, now), self.strength(entry))

    def score_bonus(self, entry: Entry, now: datetime) -> float:
        """Return what is added to the cosine similarity when ranking (0: cosine only)."""
        return 0.0

    def score_session(self, session: Session, entries: list[Entry]) -> None:
        """Compute per-memory metrics for a finished session's pairs (LUFY); no-op here."""

    def summary_written(self, entry: Entry, pairs: list[Entry]) -> None:
        """A session summary was written (LUFY aggregates the pairs' metrics); no-op here."""

    # -- MemoryMethod ---------------------------------------------------------------------

    @property
    def user(self) -> str:
        """The episode's user (whose turns are remembered): ``user_speaker`` or inferred."""
        return self.store.user

    def key_summary(self) -> str:
        """Return the profile as bullet lines (the prompts' "summary of the past conversations")."""
        return self.store.key_summary()

    def reset(self, episode: Episode) -> None:
        """Start an episode with an empty store."""
        super().reset(episode)
        self.store = EntryStore(user=self.user_speaker or infer_user(episode))

    def observe(self, session: Session) -> None:
        """Write the session's pairs, score them, summarize, refine the profile, then forget."""
        store, start = self.store, session_time(session)
        store.clock = start
        write_pairs(
            store, self.embedder, user_pairs(session.turns, store.user), session.index, start
        )
        pairs = [e for e in store.entries if e.session_index == session.index]
        self.score_session(session, [e for e in pairs if e.kind == "utterance_pair"])
        dialogue = render_history(session.turns)
        if self.summaries and session.turns:
            entry = write_summary(store, self.llm, self.embedder, session, dialogue, start)
            if entry is not None:
                self.summary_written(entry, pairs)
        if self.profile and session.turns:
            refine_profile(store, self.llm, session, dialogue, start)
        store.assessed_at = start + self.horizon
        store.forgotten = []
        if self.forgetting:
            self._forget(store.assessed_at)

    def prefetch_texts(self, episode: Episode) -> list[str]:
        """What replaying ``episode`` embeds that its data fixes (``episode_texts``)."""
        return episode_texts(episode, self._pairs(episode))

    def prefetch_episode(self, episode: Episode) -> None:
        """Embed ``prefetch_texts`` in one call, then score the episode's pairs
        (``prefetch_scores``); see ``MemoryMethod.prefetch_episode``."""
        super().prefetch_episode(episode)
        self.prefetch_scores(self._pairs(episode))

    def _pairs(self, episode: Episode) -> list[Pair]:
        return [p for s in episode.sessions for p in user_pairs(s.turns, self.store.user)]

    def prefetch_scores(self, pairs: list[Pair]) -> None:
        """Compute ahead what ``score_session`` will compute for ``pairs`` (LUFY); no-op here."""

    def prefetch(self, queries: Sequence[Query]) -> None:
        """Embed in one batch what the recalls of ``queries`` embed one by one (``recall_texts``)."""
        if texts := recall_texts(self.store, queries, self.recent_turns, self.live_writes):
            self.embedder.encode(texts)

    def recall(self, query: Query) -> Recall:
        """Retrieve the top-2 memories; update R1/R2 unless ``query`` is a probe.

        ``Recall.items``: the R1 memory (if any) then the profile facts; ``Recall.text``: the R1
        memory (the prompt's "Relevant Memory"); ``info``: R1/R2 ids and their scores.
        """
        self.check_episode(query)
        store, probe = self.store, query.question is not None
        now = query.now or store.clock or EPOCH
        if not probe and self.live_writes:
            done = live_history(query, self.recent_turns)
            write_pairs(
                store, self.embedder, user_pairs(done, store.user), query.session_index, now
            )
        ranked = retrieve(
            store,
            self.embedder,
            retrieval_text(query),
            now,
            threshold=self.threshold,
            top_k=self.top_k,
            bonus=self.score_bonus,
        )
        if not probe:
            count_retrievals(ranked, now)
        items = [self._item(ranked[0][0], now)] if ranked else []
        if self.profile_in_recall:
            items += store.profile_items()
        return Recall(tuple(items), ranked[0][0].text if ranked else "", recall_info(ranked, probe))

    def answer_prompt_fields(self, query: Query, recall: Recall) -> dict[str, str]:
        """Give the QA answerer what the chatbot sees: the Key Summary and the Relevant Memory."""
        return answer_fields(recall)

    def prompt(self, query: Query, recall: Recall) -> list[Message]:
        """Render LUFY Fig. 4 with the profile, the last 5 turns and the R1 memory."""
        return response_messages(query, recall, self.recent_turns)

    def snapshot(self) -> list[MemoryItem]:
        """Return the profile, the retained memories and those the last forgetting dropped."""
        store = self.store
        now = store.assessed_at or store.clock or EPOCH
        items = [self._item(e, now) for e in store.entries + store.forgotten]
        return store.profile_items() + items

    def retention(self) -> dict[str, int]:
        """Return cumulative created and currently retained pairs + summaries (profile excluded)."""
        return {"created": self.store.created, "retained": len(self.store.entries)}

    # -- internals ------------------------------------------------------------------------

    @staticmethod
    def dt_days(entry: Entry, now: datetime) -> float:
        """Return days since ``entry`` was last accessed (never negative)."""
        return max((now - entry.last_access).total_seconds() / 86400.0, 0.0)

    def _forget(self, at: datetime) -> None:
        store = self.store
        pool = [e for e in store.entries if e.kind in FORGETTABLE]
        keep = min(len(pool), retained_count(store.created, self.retain_ratio))
        ranked = sorted(pool, key=lambda e: (-self.importance(e, at), -e.order))
        kept = {e.item_id for e in ranked[:keep]}
        store.forgotten = [e for e in pool if e.item_id not in kept]
        for entry in store.forgotten:
            entry.retained = False
            store.vectors.pop(entry.item_id, None)
        store.entries = [e for e in store.entries if e.kind not in FORGETTABLE or e.item_id in kept]

    def entry_attrs(self, entry: Entry, now: datetime) -> dict[str, JSONValue]:
        """Return the snapshot attrs of ``entry`` (strength, importance, retained, metrics)."""
        raw: dict[str, JSONValue] = {k: entry.raw.get(k) for k in ("A", "P", "L")}
        return {
            "strength": round(self.strength(entry), 6),
            "importance": round(self.importance(entry, now), 6),
            "retained": entry.retained,
            "metrics": raw | {"R1": entry.r1, "R2": entry.r2},
            "session": entry.session_index,
            "last_access": entry.last_access.isoformat(),
        }

    def _item(self, entry: Entry, now: datetime) -> MemoryItem:
        attrs = self.entry_attrs(entry, now)
        return MemoryItem(
            entry.item_id, entry.text, entry.kind, entry.created, entry.source_ids, attrs
        )
