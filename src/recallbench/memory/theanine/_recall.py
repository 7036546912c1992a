"""Phase II of THEANINE (``_theanine.Theanine``): timeline retrieval and refinement.

``TimelineRecall`` (a mixin of ``Theanine``) retrieves the top-k memories for the dialogue
context D, samples raw timelines for each with an RNG seeded by the test instance (II-1) and
refines each for D with the Fig. 23 task (II-2, ``_refinement``), or passes them on raw or
shuffled (the Table 2 ablations). It reads the attributes ``Theanine``'s constructor and
``_clear`` set (``llm``, ``embedder``, ``k``, ``n``, ``context_turns``, ``seed``,
``max_timelines``, ``timeline_mode``, ``refinement_task``, ``graph``, ``_items``) and
``summary_failures``. ``_theanine``'s module docstring gives the paper context and deviations.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from recallbench.memory._base import render_history
from recallbench.memory._common import query_text, top_k
from recallbench.memory.theanine._refinement import render_timeline, timeline_units
from recallbench.records import MemoryItem, Query, Recall


class TimelineRecall:
    """Phase II: timeline retrieval and refinement (see the module docstring)."""

    def collect(self, query: Query) -> dict[str, Any]:
        """Run Phase II-1 for ``query``: top-k memories and one sampled raw timeline each.

        Returns ``{"retrieved": [ids], "scores": [...], "timelines": [[ids]], "anchors": [id]}``
        (``anchors[i]``: the retrieved memory timeline ``i`` was sampled for); timelines are
        deduplicated and keep the order of the retrieved memories. No state changes.
        """
        text = query_text(query, self.context_turns)
        retrieved, scores = top_k(self.embedder, self._items, text, self.k)
        timelines: list[tuple[str, ...]] = []
        anchors: list[str] = []
        for memory in retrieved:
            options = self.graph.timelines(memory.item_id, self.max_timelines)
            rng = self._rng(query, memory.item_id)
            for tau in rng.sample(options, min(self.n, len(options))):
                if tau not in timelines:
                    timelines.append(tau)
                    anchors.append(memory.item_id)
        return {
            "retrieved": [m.item_id for m in retrieved],
            "scores": scores,
            "timelines": [list(t) for t in timelines],
            "anchors": anchors,
        }

    def n_collected(self, query: Query) -> int:
        """Return how many distinct memories THEANINE's timelines bring for ``query``."""
        return len({i for tau in self.collect(query)["timelines"] for i in tau})

    def _rng(self, query: Query, salt: str) -> random.Random:
        """Return an RNG seeded by ``seed`` and the test instance (independent of call order)."""
        key = "|".join(
            map(
                str,
                (
                    self.seed,
                    query.episode_id,
                    query.session_index,
                    len(query.history),
                    query.question,
                    salt,
                ),
            )
        )
        return random.Random(int(hashlib.sha256(key.encode()).hexdigest()[:16], 16))

    def _select(self, query: Query) -> tuple[list[MemoryItem], dict[str, Any]]:
        found = self.collect(query)
        by_id = {m.item_id: m for m in self._items}
        order = list(dict.fromkeys(i for tau in found["timelines"] for i in tau))
        if self.timeline_mode == "shuffled":
            self._rng(query, "shuffle").shuffle(order)
        else:
            position = {node: i for i, node in enumerate(self.graph.nodes)}
            order.sort(key=position.__getitem__)
        found["n_collected"] = len(order)
        found["timeline_mode"] = self.timeline_mode
        return [by_id[i] for i in order], found

    def recall(self, query: Query) -> Recall:
        """Return the collected memories and the refined (or raw/shuffled) timelines as text."""
        self.check_episode(query)
        items, info = self._select(query)
        by_id = {m.item_id: m for m in items}
        timelines = [[by_id[i] for i in tau] for tau in info["timelines"]]
        if self.timeline_mode == "shuffled":
            text = "\n".join(m.text for m in items)
        elif self.timeline_mode == "raw":
            text = "\n".join(render_timeline(self._events(tau)) for tau in timelines)
        else:
            text, info["refine_failures"] = self._refine(query, timelines, info["anchors"])
        info = {
            "method": type(self).__name__,
            "store_size": len(self._items),
            "summary_failures": self.summary_failures,
            **info,
        }
        return Recall(tuple(items), text, info)

    def offline_lines(self, recall: Recall) -> list[str]:
        """The events of the timelines as the Fig. 24 prompt shows them (refined: the events the
        refinement kept; raw: every event of each timeline), so the offline reply copies what
        the generator would read; shuffled events are the recalled items themselves."""
        if self.timeline_mode == "shuffled":
            return [line for item in recall.items for line in item.text.splitlines()]
        return timeline_units(recall.text)

    def _events(self, timeline: list[MemoryItem]) -> list[tuple[str, str | None]]:
        ids = [m.item_id for m in timeline]
        rels = [None] + [self.graph.relation(a, b) for a, b in zip(ids, ids[1:], strict=False)]
        return [(m.text, rel) for m, rel in zip(timeline, rels, strict=True)]

    def _refine(
        self, query: Query, timelines: list[list[MemoryItem]], anchors: list[str]
    ) -> tuple[str, int]:
        """Refine each timeline for D (Phase II-2, Eq. 11); raw timeline when unparseable."""
        context = render_history(query.history)
        if query.question:
            context = f"{context}\n{query.question}".strip()
        qtext = query_text(query, self.context_turns)
        fields = []
        for tau, anchor_id in zip(timelines, anchors, strict=True):
            events = self._events(tau)
            anchor = next(i for i, m in enumerate(tau) if m.item_id == anchor_id)
            fields.append(
                {
                    "current_dialogue_context": context,
                    "input_path": render_timeline(events),
                    "events": events,
                    "anchor": anchor,
                    "query": qtext,
                }
            )
        results = self.llm.run_many(self.refinement_task, fields) if fields else []
        texts = [r.value or f["input_path"] for r, f in zip(results, fields, strict=True)]
        return "\n".join(texts), sum(not r.parsed for r in results)
