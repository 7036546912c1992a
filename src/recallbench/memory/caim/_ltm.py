"""CAIM's long-term memory and Post-Thinking's writes to it (sec. 3.3.3): store, expand, review.

``LongTermMemory`` is one episode's state of ``CAIM`` (``_caim``, whose docstring lists the
deviations these steps follow): the LTM's Table 1 rows as ``MemoryItem``s, the episode's
(possibly expanded) ontology, the session dates seen and the expansions made.
``PostThinking`` is the collaborator that writes into it, given the LLM, the embedder (duplicate
candidates for the offline review) and the review threshold. Also the Table 1 row of a memory
as the prompts see it (``_entry``) and a key event's source turns (``_sources``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from recallbench.embed.base import TextEmbedder
from recallbench.llm.protocol import LLMClient
from recallbench.memory.caim._ontology import Ontology
from recallbench.memory.caim._post import review_task, thought_task
from recallbench.memory.caim._shapes import ThoughtEntry, render_items
from recallbench.memory.caim._tasks import ONTOLOGY_EXPANSION_TASK
from recallbench.records import MemoryItem, Session
from recallbench.text import words


@dataclass
class LongTermMemory:
    """One episode's CAIM memory: Table 1 rows, the ontology, session dates, expansions."""

    ontology: Ontology
    episode_id: str = ""
    speakers: tuple[str, ...] = ()
    items: list[MemoryItem] = field(default_factory=list)
    dates: list[str] = field(default_factory=list)  # ISO dates of the observed sessions
    expansions: list[str] = field(default_factory=list)  # terms Ontology Expansion added
    counter: int = 0  # thoughts stored (their ids)

    def names(self) -> tuple[str, ...]:
        """Return the words of the speakers' names (never tags: "Mara" is not a topic)."""
        return tuple(dict.fromkeys(w for s in self.speakers for w in words(s)))


@dataclass(frozen=True)
class PostThinking:
    """Post-Thinking's LTM writes of ``CAIM`` (see the module docstring)."""

    llm: LLMClient
    embedder: TextEmbedder
    review_threshold: float

    def expand(self, ltm: LongTermMemory, text: str) -> None:
        """Run Ontology Expansion on ``text``; merge the new terms into the episode's ontology."""
        res = self.llm.run(
            ONTOLOGY_EXPANSION_TASK,
            ontology=ltm.ontology.to_json(),
            text=text,
            skip=ltm.names(),
        )
        if res.value is not None:
            ltm.expansions += ltm.ontology.merge(res.value)

    def store(self, ltm: LongTermMemory, piece: str, day: str, session: Session) -> MemoryItem:
        """Store one key event as an inductive thought with tags and the session's date."""
        known = frozenset(ltm.ontology.terms())
        res = self.llm.run(
            thought_task(known),
            ontology=ltm.ontology.to_json(),
            event=piece,
            timestamp=day,
            speakers=ltm.speakers,
        )
        if res.value is None:  # unusable reply: keep the key event itself, tagged lexically
            tags, thought = ltm.ontology.select(piece, skip=frozenset(ltm.names())), piece
        else:
            tags, thought, _ = res.value
        ltm.counter += 1
        item = MemoryItem(
            item_id=f"{ltm.episode_id}/caim/{ltm.counter}",
            text=thought,
            kind="thought",
            created=session.start,
            source_ids=_sources(piece, session),
            attrs={"tags": list(tags), "timestamp": day, "timestamps": [day]},
        )
        ltm.items.append(item)
        return item

    def review(self, ltm: LongTermMemory, new_ids: set[str]) -> None:
        """Memory Review: per tag of the new memories, merge the duplicates sharing it."""
        tags = list(
            dict.fromkeys(t for it in ltm.items if it.item_id in new_ids for t in it.attrs["tags"])
        )
        for tag in tags:
            group = [it for it in ltm.items if tag in it.attrs["tags"]]
            if len(group) < 2 or not any(it.item_id in new_ids for it in group):
                continue
            entries = [_entry(it) for it in group]
            res = self.llm.run(
                review_task(len(group)),
                tag=tag,
                memories=render_items(entries),
                entries=entries,
                groups=self._duplicates(group),
            )
            for ids, new_tags, thought, day in res.value or ():
                if len(ids) >= 2:
                    merged = _merge(ltm, [group[i] for i in ids], new_tags, thought, day)
                    new_ids.add(merged.item_id)

    def _duplicates(self, group: list[MemoryItem]) -> list[list[int]]:
        """Clusters (single link) of thoughts with cosine >= review_threshold; singletons too."""
        vecs = self.embedder.encode([it.text for it in group])
        sim = np.asarray(vecs) @ np.asarray(vecs).T
        parent = list(range(len(group)))

        def root(i: int) -> int:
            while parent[i] != i:
                i = parent[i]
            return i

        for i in range(len(group)):
            for j in range(i + 1, len(group)):
                if sim[i, j] >= self.review_threshold:
                    parent[root(j)] = root(i)
        clusters: dict[int, list[int]] = {}
        for i in range(len(group)):
            clusters.setdefault(root(i), []).append(i)
        return list(clusters.values())


def _merge(
    ltm: LongTermMemory, members: list[MemoryItem], tags: list[str], thought: str, day: str
) -> MemoryItem:
    """Replace ``members`` by one thought at the first member's place (its id, every date)."""
    keep = [t for t in tags if t in ltm.ontology]
    keep = keep or list(dict.fromkeys(t for m in members for t in m.attrs["tags"]))
    days = sorted({d for m in members for d in m.attrs["timestamps"]} | {day})
    first = members[0]
    merged = MemoryItem(
        item_id=first.item_id,
        text=thought,
        kind="thought",
        created=min(m.created for m in members if m.created is not None),  # CAIM: all dated
        source_ids=tuple(dict.fromkeys(s for m in members for s in m.source_ids)),
        attrs={
            "tags": keep,
            "timestamp": max(days),
            "timestamps": days,
            "merged_from": [m.item_id for m in members],
        },
    )
    gone = {m.item_id for m in members}
    at = ltm.items.index(first)
    ltm.items = [m for m in ltm.items if m.item_id not in gone]
    ltm.items.insert(min(at, len(ltm.items)), merged)
    return merged


def _entry(item: MemoryItem) -> ThoughtEntry:
    attrs = item.attrs
    return {
        "tags": attrs["tags"],
        "thought": item.text,
        "timestamp": attrs["timestamp"],
        "timestamps": attrs["timestamps"],
    }


def _sources(piece: str, session: Session) -> tuple[str, ...]:
    """The turns a key event came from: those sharing the most content words with it (at least
    half of the event's words, or all when ambiguous); else every turn of the session."""
    body = piece.partition(": ")[2] if ": " in piece[:40] else piece
    want = set(words(body))
    scores = [len(want & set(words(t.text))) for t in session.turns]
    best = max(scores, default=0)
    if want and best * 2 >= len(want):
        return tuple(t.turn_id for t, s in zip(session.turns, scores, strict=True) if s == best)
    return tuple(t.turn_id for t in session.turns)
