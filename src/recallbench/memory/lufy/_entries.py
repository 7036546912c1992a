"""The LUFY-family store's state and how entries are written into it (``_store.LufyFamilyMemory``).

``Entry`` is one memory with its bookkeeping; ``EntryStore`` is everything one episode keeps
(the entries and their vectors, the profile, the counters and the simulated clock). The
functions below write into a store: utterance pairs (``write_pairs``), the session summary
(``write_summary``) and the refined profile (``refine_profile``). Each takes the collaborators it
calls (the embedder, the LLM) as arguments, so nothing is read from a host object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from recallbench.clock import EPOCH
from recallbench.embed.base import TextEmbedder
from recallbench.llm.protocol import LLMClient
from recallbench.memory._base import render_history
from recallbench.memory.lufy._tasks import (
    NO_INFO,
    PROFILE_TASK,
    SUMMARY_TASK,
    attribute,
    bullets,
    profile_facts,
)
from recallbench.records import Episode, MemoryItem, Session, Turn

Pair = tuple[Turn, Turn | None]  # a user turn and the (non-user) turn before it, if any


@dataclass
class Entry:
    """A memory of the store with its mutable bookkeeping (counters, access time, metrics)."""

    item_id: str
    kind: str
    text: str
    created: datetime
    source_ids: tuple[str, ...]
    session_index: int
    order: int
    last_access: datetime
    user_text: str = ""
    context_text: str = ""
    r1: int = 0
    r2: int = 0
    raw: dict[str, float | None] = field(default_factory=dict)
    retained: bool = True


@dataclass
class ProfileMeta:
    """When the profile was first written, the turns each fact quotes, the last session."""

    created: datetime | None = None
    sources: tuple[tuple[str, ...], ...] = ()
    updated_after_session: int = 0


@dataclass
class EntryStore:
    """One episode's memory: retained entries (in write order) with their vectors, the entries
    the last forgetting dropped, the profile, and the counters and clock of the store."""

    user: str = ""
    entries: list[Entry] = field(default_factory=list)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    known: set[str] = field(default_factory=set)  # user turn ids already written as pairs
    forgotten: list[Entry] = field(default_factory=list)
    profile: list[str] = field(default_factory=list)
    profile_meta: ProfileMeta = field(default_factory=ProfileMeta)
    seen_turns: list[Turn] = field(default_factory=list)  # the user's turns the profile saw
    created: int = 0  # pairs + summaries written in the episode (forgotten ones included)
    order: int = 0
    clock: datetime | None = None  # start of the last observed session
    assessed_at: datetime | None = None  # when the last forgetting step evaluated importance

    def new_entry(
        self,
        kind: str,
        item_id: str,
        text: str,
        at: datetime,
        index: int,
        source_ids: tuple[str, ...],
    ) -> Entry:
        """Return a new entry stamped ``at``, counted as created, next in write order."""
        self.order += 1
        self.created += 1
        return Entry(item_id, kind, text, at, source_ids, index, self.order, at)

    def add(self, entries: list[Entry], embedder: TextEmbedder) -> None:
        """Embed ``entries`` and keep them."""
        vecs = embedder.encode([e.text for e in entries])
        for entry, vec in zip(entries, vecs, strict=True):
            self.vectors[entry.item_id] = vec
            self.entries.append(entry)

    def key_summary(self) -> str:
        """Return the profile as bullet lines (the prompts' "summary of the past conversations")."""
        return bullets(self.profile) if self.profile else NO_INFO

    def profile_items(self) -> list[MemoryItem]:
        """Return the profile facts as memory items (never forgotten, no strength)."""
        meta = self.profile_meta
        attrs: dict[str, Any] = {
            "strength": None,
            "importance": None,
            "retained": True,
            "metrics": {},
            "updated_after_session": meta.updated_after_session,
        }
        return [
            MemoryItem(f"profile/{k}", fact, "profile", meta.created, ids, dict(attrs))
            for k, (fact, ids) in enumerate(zip(self.profile, meta.sources, strict=True))
        ]


def user_pairs(turns: tuple[Turn, ...] | list[Turn], user: str) -> list[Pair]:
    """Return each non-empty turn of ``user`` with the non-empty other turn just before it."""
    out: list[Pair] = []
    for i, turn in enumerate(turns):
        if turn.speaker != user or not turn.text.strip():
            continue
        prev = turns[i - 1] if i > 0 and turns[i - 1].speaker != user else None
        out.append((turn, prev if prev is not None and prev.text.strip() else None))
    return out


def pair_text(pair: Pair) -> str:
    """The text of an utterance-pair memory: the turn before (if any), then the user's turn."""
    user_turn, context = pair
    return render_history([context, user_turn] if context else [user_turn])


def write_pairs(
    store: EntryStore, embedder: TextEmbedder, pairs: list[Pair], index: int, at: datetime
) -> None:
    """Write the pairs whose user turn the store has not written yet."""
    fresh = [(u, c) for u, c in pairs if u.turn_id not in store.known]
    if not fresh:
        return
    entries = []
    for user_turn, context in fresh:
        store.known.add(user_turn.turn_id)
        text = pair_text((user_turn, context))
        ids = (user_turn.turn_id, context.turn_id) if context else (user_turn.turn_id,)
        entry = store.new_entry("utterance_pair", f"pair:{user_turn.turn_id}", text, at, index, ids)
        entry.user_text, entry.context_text = user_turn.text, context.text if context else ""
        entries.append(entry)
    store.add(entries, embedder)


def write_summary(
    store: EntryStore,
    llm: LLMClient,
    embedder: TextEmbedder,
    session: Session,
    dialogue: str,
    at: datetime,
) -> Entry | None:
    """Summarize the session into a new entry; None when the call or its parse failed."""
    res = llm.run(SUMMARY_TASK, user=store.user, dialogue=dialogue)
    if res.value is None:  # the call or its parse failed; counted in llm.usage
        return None
    sources = attribute(res.value.split(": ", 1)[-1].split(" / "), session.turns) or tuple(
        t.turn_id for t in session.turns
    )
    entry = store.new_entry(
        "summary", f"summary:{session.session_id}", res.value, at, session.index, sources
    )
    store.add([entry], embedder)
    return entry


def refine_profile(
    store: EntryStore, llm: LLMClient, session: Session, dialogue: str, at: datetime
) -> None:
    """Refine the profile with the session; a failed call keeps the old profile."""
    res = llm.run(PROFILE_TASK, user=store.user, profile=store.key_summary(), dialogue=dialogue)
    if res.value is None:  # the call or its parse failed: keep the old profile
        return
    created = store.profile_meta.created
    store.profile = profile_facts(res.value)
    store.seen_turns += [t for t in session.turns if t.speaker == store.user]
    sources = tuple(attribute([fact], store.seen_turns) for fact in store.profile)
    store.profile_meta = ProfileMeta(created or at, sources, session.index)


def session_time(session: Session) -> datetime:
    """Return the session's simulated start (``EPOCH + index - 1`` days when unknown)."""
    return session.start or EPOCH + timedelta(days=session.index - 1)


def infer_user(episode: Episode) -> str:
    """Return the user: meta["user"], else the speaker of the turns labelled role "user"
    (LongMemEval's chat logs: the replier there is the assistant), else the speaker with
    importance labels, else the replier."""
    user = episode.meta.get("user")
    if isinstance(user, str) and user in episode.speakers:
        return user
    for turn in episode.turns():
        if turn.labels.get("role") == "user":
            return turn.speaker
    for turn in episode.turns():
        if "importance" in turn.labels:
            return turn.speaker
    for session in episode.sessions:
        seen = [t.speaker for t in session.turns]
        later = [s for s in seen if s != seen[0]] if seen else []
        if later:
            return later[0]
    return episode.speakers[-1] if episode.speakers else ""
