"""CAIM's writes to the long-term memory (Post-Thinking, sec. 3.3.3): store, expand, review.

``PostThinking`` is a mixin of ``CAIM`` (``_caim``, whose docstring lists the deviations these
steps follow); it reads the attributes that class's constructor sets (``llm``, ``embedder``,
``review_threshold``, ``episode_id``, ``speakers``) and the episode state of ``CAIM._clear``.
Also the Table 1 row of a memory as the prompts see it (``_entry``) and a key event's source
turns (``_sources``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from recallbench.memory.caim._post import review_task, thought_task
from recallbench.memory.caim._tasks import ONTOLOGY_EXPANSION_TASK, render_items
from recallbench.records import MemoryItem, Session
from recallbench.text import words


class PostThinking:
    """Post-Thinking's LTM writes of ``CAIM`` (see the module docstring)."""

    def _expand(self, text: str) -> None:
        res = self.llm.run(
            ONTOLOGY_EXPANSION_TASK,
            ontology=self._ontology.to_json(),
            text=text,
            skip=self._names(),
        )
        if res.value is not None:
            self.expansions += self._ontology.merge(res.value)

    def _store(self, piece: str, day: str, session: Session) -> MemoryItem:
        known = frozenset(self._ontology.terms())
        res = self.llm.run(
            thought_task(known),
            ontology=self._ontology.to_json(),
            event=piece,
            timestamp=day,
            speakers=self.speakers,
        )
        if res.value is None:  # unusable reply: keep the key event itself, tagged lexically
            tags, thought = self._ontology.select(piece, skip=frozenset(self._names())), piece
        else:
            tags, thought, _ = res.value
        self._counter += 1
        item = MemoryItem(
            item_id=f"{self.episode_id}/caim/{self._counter}",
            text=thought,
            kind="thought",
            created=session.start,
            source_ids=_sources(piece, session),
            attrs={"tags": list(tags), "timestamp": day, "timestamps": [day]},
        )
        self._ltm.append(item)
        return item

    def _review(self, new_ids: set[str]) -> None:
        tags = list(
            dict.fromkeys(t for it in self._ltm if it.item_id in new_ids for t in it.attrs["tags"])
        )
        for tag in tags:
            group = [it for it in self._ltm if tag in it.attrs["tags"]]
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
                    merged = self._merge([group[i] for i in ids], new_tags, thought, day)
                    new_ids.add(merged.item_id)

    def _merge(self, members, tags, thought, day) -> MemoryItem:
        keep = [t for t in tags if t in self._ontology]
        keep = keep or list(dict.fromkeys(t for m in members for t in m.attrs["tags"]))
        days = sorted({d for m in members for d in m.attrs["timestamps"]} | {day})
        first = members[0]
        merged = MemoryItem(
            item_id=first.item_id,
            text=thought,
            kind="thought",
            created=min(m.created for m in members),
            source_ids=tuple(dict.fromkeys(s for m in members for s in m.source_ids)),
            attrs={
                "tags": keep,
                "timestamp": max(days),
                "timestamps": days,
                "merged_from": [m.item_id for m in members],
            },
        )
        gone = {m.item_id for m in members}
        at = self._ltm.index(first)
        self._ltm = [m for m in self._ltm if m.item_id not in gone]
        self._ltm.insert(min(at, len(self._ltm)), merged)
        return merged

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


def _entry(item: MemoryItem) -> dict[str, Any]:
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
