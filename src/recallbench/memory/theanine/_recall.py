"""Phase II of THEANINE (``_theanine.Theanine``): timeline retrieval and refinement.

``TimelineRetriever`` is the method's Phase II collaborator: given the memory graph and its
memories (passed in, owned by ``Theanine``), it retrieves the top-k memories for the dialogue
context D, samples raw timelines for each with an RNG seeded by the test instance
(``timeline_rng``, II-1) and refines each for D with the Fig. 23 task (II-2, ``_refinement``), or
passes them on raw or shuffled (the Table 2 ablations). ``_theanine``'s module docstring gives
the paper context and deviations.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from typing import Any, Literal, NotRequired, TypedDict

from recallbench.embed.base import TextEmbedder
from recallbench.llm.protocol import LLMClient
from recallbench.llm.task import PromptTask
from recallbench.memory._base import query_text, render_history
from recallbench.memory.blocks.retrieval import top_k
from recallbench.memory.theanine._graph import MemoryGraph
from recallbench.memory.theanine._refinement import render_timeline
from recallbench.records import MemoryItem, Query

TimelineMode = Literal["refined", "raw", "shuffled"]


def timeline_rng(seed: int, query: Query, salt: str) -> random.Random:
    """Return an RNG seeded by ``seed`` and the test instance (independent of call order)."""
    parts = (seed, query.episode_id, query.session_index, len(query.history), query.question, salt)
    key = "|".join(map(str, parts))
    return random.Random(int(hashlib.sha256(key.encode()).hexdigest()[:16], 16))


class Collected(TypedDict):
    """What Phase II-1 collected for a query (``TimelineRetriever.collect``), then what the
    selection and refinement add; ``Recall.info`` of THEANINE."""

    retrieved: list[str]  # top-k memory ids
    scores: list[float]
    timelines: list[list[str]]  # sampled raw timelines, deduplicated
    anchors: list[str]  # anchors[i]: the retrieved memory timeline i was sampled for
    n_collected: NotRequired[int]
    timeline_mode: NotRequired[str]
    refine_failures: NotRequired[int]


@dataclass(frozen=True)
class TimelineRetriever:
    """Phase II over a memory graph (see the module docstring); the settings are ``Theanine``'s.

    Args:
        llm, embedder: run the refinement task; embed memories and the query.
        refinement_task: the Fig. 23 task (``_refinement.refinement_task``).
        k, n, context_turns, seed, max_timelines: as in ``Theanine``.
        mode: ``refined``, ``raw`` or ``shuffled`` (``Theanine``'s ``timelines``).
    """

    llm: LLMClient
    embedder: TextEmbedder
    refinement_task: PromptTask[str | None]
    k: int = 3
    n: int = 1
    context_turns: int = 0
    seed: int = 0
    max_timelines: int = 64
    mode: TimelineMode = "refined"

    def collect(self, query: Query, graph: MemoryGraph, items: list[MemoryItem]) -> Collected:
        """Run Phase II-1 for ``query``: top-k memories and one sampled raw timeline each.

        Returns ``{"retrieved": [ids], "scores": [...], "timelines": [[ids]], "anchors": [id]}``
        (``anchors[i]``: the retrieved memory timeline ``i`` was sampled for); timelines are
        deduplicated and keep the order of the retrieved memories. No state changes.
        """
        text = query_text(query, self.context_turns)
        retrieved, scores = top_k(self.embedder, items, text, self.k)
        timelines: list[tuple[str, ...]] = []
        anchors: list[str] = []
        for memory in retrieved:
            options = graph.timelines(memory.item_id, self.max_timelines)
            rng = timeline_rng(self.seed, query, memory.item_id)
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

    def retrieve(
        self, query: Query, graph: MemoryGraph, items: list[MemoryItem]
    ) -> tuple[list[MemoryItem], str, Collected]:
        """Return the collected memories, the refined (or raw/shuffled) timelines as text, info."""
        selected, info = self._select(query, graph, items)
        by_id = {m.item_id: m for m in selected}
        timelines = [[by_id[i] for i in tau] for tau in info["timelines"]]
        if self.mode == "shuffled":
            text = "\n".join(m.text for m in selected)
        elif self.mode == "raw":
            text = "\n".join(render_timeline(_events(tau, graph)) for tau in timelines)
        else:
            text, info["refine_failures"] = self._refine(query, graph, timelines, info["anchors"])
        return selected, text, info

    def _select(
        self, query: Query, graph: MemoryGraph, items: list[MemoryItem]
    ) -> tuple[list[MemoryItem], Collected]:
        found = self.collect(query, graph, items)
        by_id = {m.item_id: m for m in items}
        order = list(dict.fromkeys(i for tau in found["timelines"] for i in tau))
        if self.mode == "shuffled":
            timeline_rng(self.seed, query, "shuffle").shuffle(order)
        else:
            position = {node: i for i, node in enumerate(graph.nodes)}
            order.sort(key=position.__getitem__)
        found["n_collected"] = len(order)
        found["timeline_mode"] = self.mode
        return [by_id[i] for i in order], found

    def _refine(
        self,
        query: Query,
        graph: MemoryGraph,
        timelines: list[list[MemoryItem]],
        anchors: list[str],
    ) -> tuple[str, int]:
        """Refine each timeline for D (Phase II-2, Eq. 11); raw timeline when unparseable."""
        context = render_history(query.history)
        if query.question:
            context = f"{context}\n{query.question}".strip()
        qtext = query_text(query, self.context_turns)
        fields: list[dict[str, Any]] = []
        for tau, anchor_id in zip(timelines, anchors, strict=True):
            events = _events(tau, graph)
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


def _events(timeline: list[MemoryItem], graph: MemoryGraph) -> list[tuple[str, str | None]]:
    """Return ``[(event text, relation into it)]`` along ``timeline`` (None for the first)."""
    ids = [m.item_id for m in timeline]
    rels: list[str | None] = [None]
    rels += [graph.relation(a, b) for a, b in zip(ids, ids[1:], strict=False)]
    return [(m.text, rel) for m, rel in zip(timeline, rels, strict=True)]
