"""The LUFY-family store's entries and how they are written (``_store.LufyFamilyMemory``).

``Entry`` is one memory with its bookkeeping; ``EntryWriter`` (a mixin of ``LufyFamilyMemory``)
writes utterance pairs, session summaries and the profile. It reads the attributes the store's
constructor and ``reset`` set (``llm``, ``embedder``, ``user``, ``_entries``, ``_vectors``,
``_known``, ``_order``, ``_created``, ``_profile``, ``_profile_meta``, ``_seen_turns``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from recallbench.memory._base import render_history
from recallbench.memory.lufy._tasks import (
    NO_INFO,
    PROFILE_TASK,
    SUMMARY_TASK,
    attribute,
    bullets,
    profile_facts,
)
from recallbench.records import MemoryItem, Session, Turn


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


class EntryWriter:
    """Write pairs, summaries and the profile into the store (see the module docstring)."""

    def _pairs(self, turns: tuple[Turn, ...] | list[Turn]) -> list[tuple[Turn, Turn | None]]:
        out = []
        for i, turn in enumerate(turns):
            if turn.speaker != self.user or not turn.text.strip():
                continue
            prev = turns[i - 1] if i > 0 and turns[i - 1].speaker != self.user else None
            out.append((turn, prev if prev is not None and prev.text.strip() else None))
        return out

    def _new_entry(
        self,
        kind: str,
        item_id: str,
        text: str,
        at: datetime,
        index: int,
        source_ids: tuple[str, ...],
    ) -> Entry:
        self._order += 1
        self._created += 1
        return Entry(item_id, kind, text, at, source_ids, index, self._order, at)

    def _write_pairs(self, pairs: list[tuple[Turn, Turn | None]], index: int, at: datetime) -> None:
        fresh = [(u, c) for u, c in pairs if u.turn_id not in self._known]
        if not fresh:
            return
        entries = []
        for user_turn, context in fresh:
            self._known.add(user_turn.turn_id)
            text = render_history([context, user_turn] if context else [user_turn])
            ids = (user_turn.turn_id, context.turn_id) if context else (user_turn.turn_id,)
            entry = self._new_entry(
                "utterance_pair", f"pair:{user_turn.turn_id}", text, at, index, ids
            )
            entry.user_text, entry.context_text = user_turn.text, context.text if context else ""
            entries.append(entry)
        self._add(entries)

    def _add(self, entries: list[Entry]) -> None:
        vecs = self.embedder.encode([e.text for e in entries])
        for entry, vec in zip(entries, vecs, strict=True):
            self._vectors[entry.item_id] = vec
            self._entries.append(entry)

    def _write_summary(self, session: Session, dialogue: str, at: datetime, pairs: list) -> None:
        res = self.llm.run(SUMMARY_TASK, user=self.user, dialogue=dialogue)
        if res.value is None:  # the call or its parse failed; counted in llm.usage
            return
        sources = attribute(res.value.split(": ", 1)[-1].split(" / "), session.turns) or tuple(
            t.turn_id for t in session.turns
        )
        entry = self._new_entry(
            "summary", f"summary:{session.session_id}", res.value, at, session.index, sources
        )
        self._add([entry])
        self.summary_written(entry, pairs)

    def summary_written(self, entry: Entry, pairs: list[Entry]) -> None:
        """Hook: a session summary was written (LUFY aggregates the pairs' metrics)."""

    def key_summary(self) -> str:
        """Return the profile as bullet lines (the prompts' "summary of the past conversations")."""
        return bullets(self._profile) if self._profile else NO_INFO

    def _refine_profile(self, session: Session, dialogue: str, at: datetime) -> None:
        res = self.llm.run(
            PROFILE_TASK, user=self.user, profile=self.key_summary(), dialogue=dialogue
        )
        if res.value is None:  # the call or its parse failed: keep the old profile
            return
        created, _, _ = self._profile_meta
        self._profile = profile_facts(res.value)
        self._seen_turns += [t for t in session.turns if t.speaker == self.user]
        sources = tuple(attribute([fact], self._seen_turns) for fact in self._profile)
        self._profile_meta = (created or at, sources, session.index)

    def _profile_items(self) -> list[MemoryItem]:
        created, sources, updated = self._profile_meta
        attrs = {
            "strength": None,
            "importance": None,
            "retained": True,
            "metrics": {},
            "updated_after_session": updated,
        }
        return [
            MemoryItem(f"profile/{k}", fact, "profile", created, ids, dict(attrs))
            for k, (fact, ids) in enumerate(zip(self._profile, sources, strict=True))
        ]
