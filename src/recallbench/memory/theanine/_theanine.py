"""THEANINE: timeline-based memory management for lifelong dialogue agents.

Paper: Ong, Kim, Gwak, Chae, Kwon, Jo, Hwang, Lee, Yeo, "Towards Lifelong Dialogue Agents via
Timeline-based Memory Management", NAACL 2025 (sec. 2, App. B, Algorithms 1-2, App. H prompts).

Phase II (timeline retrieval and refinement) is the collaborator ``_recall.TimelineRetriever``.

Implemented:
- Phase I (``observe``): each finished session is summarized into memories m = (event, time)
  with the shared per-session summarization task ``memory.summarize_session``
  (``session_summaries``; item ``created`` = session start). For every new memory the top-j
  (j = 3) most similar memories of G^t are its associative memories M_a (I-1); each pair gets a
  relation from the Fig. 22 prompt over the 7 relations + None, given both memories' origin
  dialogues (task ``theanine.link_relation``, stage ``memory``) (I-2); m_new is linked to the most
  recent assigned memory of each connected component of G^t (Algorithm 1; ``_graph``).
  No memory is ever updated or removed.
- Phase II (``recall``): top-k (k = 3) memories with the dialogue context D as query; for each,
  its raw timelines from the component's oldest memory through it to out-degree-0 ends (Eq. 10);
  n = 1 timeline sampled per retrieved memory with a seeded RNG keyed by the test instance
  (II-1); each timeline refined for D with the Fig. 23 prompt (task
  ``theanine.refine_timeline``) (II-2).
- Phase III (``prompt``): the Fig. 24 response prompt (``_prompts.THEANINE_RESPONSE_PROMPT``)
  with the refined timelines as Memory.
- Snapshots: every memory item carries ``attrs`` ``component`` (id of the component's oldest
  memory), ``edges_in``/``edges_out`` (``{"from"|"to": id, "relation": label}``), ``session``.
- Ablations (Table 2), as configs: ``linking: temporal`` (w/o relation-aware linking: every
  associative memory is assigned, edges labelled ``Similar``), ``timelines: raw`` (w/o
  refinement: raw timelines go to the response prompt), ``timelines: shuffled`` (timelines broken
  down into their events in a seeded random order, rendered like top-k retrieval).

Stages: summarization and linking happen after a session (stage ``memory``); refinement runs
for every response, inside ``recall``, so its cost is billed to stage ``answer`` with the
response it serves (the paper's Table 8 also counts it per response).

Offline twins (``extractive`` backend):
- relation (``relation_rule``): on Porter-stemmed content words of the two events (speaker tags
  stripped) and the embedder cosine c: unrelated (no shared stem and c < ``strong_cos``, or
  c < ``none_cos``) -> None; same subject with a change cue in B ("now", "no longer",
  "instead", "quit", "sold", "recovered", ..., or a negation present in only one) -> Changed;
  same subject with a wish cue in B ("want", "plan", "hope", ...) -> Want; a feeling cue in B
  ("feel", "happy", "worried", ...) -> React; otherwise SameTopic. Cause, Reason and HinderedBy
  need world knowledge and are never produced offline.
- refinement (``extractive_refinement``): the raw timeline in chronological order, trimmed to
  the retrieved memory plus the events most cosine-similar to the context (``refine_max_events``
  in all), joined with a connective per relation ("Later, this changed:" for Changed, ...).
- response (``offline_lines``): the extractive reply copies an event of the rendered timelines
  the Fig. 24 prompt shows, not of the retrieved items: refinement changes only that rendering,
  and before issue 24 the offline reply read the items, so THEANINE and its "w/o Timeline
  Refinement" ablation gave identical replies. Offline, refinement still only trims events: the
  two differ where the trimmed event was the one the reply would copy.

Deviations:
- Embedder: the configured one (MiniLM offline), not text-embedding-3-small.
- The paper prints no summarization prompt: the shared ``_summarize.SUMMARY_PROMPT`` is ours.
- Origin dialogue of a memory: the turns it was attributed to (``_gold.attribute``), as in the
  paper's linking examples (Fig. 16-18 "Contextual Background"), else its whole session.
- When the component's oldest memory has no directed path to the retrieved memory (two roots
  joined later), the timeline starts at the retrieved memory's oldest ancestor instead; the paper
  does not say what happens then (Eq. 10 would yield no timeline).
- Timelines are enumerated depth-first up to ``max_timelines`` before sampling; identical
  timelines sampled for different retrieved memories are kept once.
- Unparseable Fig. 22 replies count as None (no edge); an empty refinement falls back to the raw
  timeline. Both are counted (``llm.usage`` parse failures).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Literal

from recallbench.embed.base import TextEmbedder
from recallbench.errors import ConfigError
from recallbench.llm.protocol import LLMClient
from recallbench.memory._base import render_history
from recallbench.memory.blocks.prompts import PromptStyle
from recallbench.memory.blocks.retrieval import top_k
from recallbench.memory.session_summaries import SessionSummaries
from recallbench.memory.theanine._graph import MemoryGraph
from recallbench.memory.theanine._linking import (
    DEFAULT_THRESHOLDS,
    LINKING_MODES,
    NONE,
    SIMILAR,
    TIMELINE_MODES,
    linking_task,
    relation_texts,
)
from recallbench.memory.theanine._recall import Collected, TimelineRetriever
from recallbench.memory.theanine._refinement import refinement_task, timeline_units
from recallbench.records import MemoryItem, Query, Recall, Session, Turn

# --- the method ------------------------------------------------------------------------------


class Theanine(SessionSummaries):
    """THEANINE (Ong et al., NAACL 2025): a relation-aware memory graph and refined timelines.

    Args:
        llm, embedder: collaborators (summarization, linking and refinement run on ``llm``).
        j: associative memories per new memory (Phase I-1; paper: 3).
        k: memories retrieved for a dialogue context (Phase II; paper: 3).
        n: raw timelines sampled per retrieved memory (Phase II-1; paper: 1).
        context_turns: turns of D used as the retrieval query (0: all of D, as in the paper).
        linking: ``relation`` (Fig. 22) or ``temporal`` (ablation: similarity edges only).
        timelines: ``refined`` (Fig. 23), ``raw`` (ablation: w/o refinement) or ``shuffled``
            (ablation: timelines broken down into randomly ordered events).
        seed: seed of timeline sampling and shuffling (combined with the test instance).
        max_timelines: raw timelines enumerated per retrieved memory before sampling.
        refine_max_events: events kept by the offline refinement.
        thresholds: offline relation-rule thresholds (``none_cos``, ``strong_cos``).
        **params: ``SessionSummaries`` options (source, summarize_speakers, max_sentences, ...).
    """

    def __init__(
        self,
        llm: LLMClient,
        embedder: TextEmbedder,
        *,
        j: int = 3,
        k: int = 3,
        n: int = 1,
        context_turns: int = 0,
        linking: Literal["relation", "temporal"] = "relation",
        timelines: Literal["refined", "raw", "shuffled"] = "refined",
        seed: int = 0,
        max_timelines: int = 64,
        refine_max_events: int = 4,
        thresholds: Mapping[str, float] | None = None,
        prompt_style: PromptStyle = "theanine",
        **params: Any,
    ) -> None:
        super().__init__(llm, embedder, prompt_style=prompt_style, **params)
        for name, value in (
            ("j", j),
            ("k", k),
            ("n", n),
            ("max_timelines", max_timelines),
            ("refine_max_events", refine_max_events),
        ):
            if int(value) < 1:
                raise ConfigError(f"{name} must be >= 1, got {value}")
        if linking not in LINKING_MODES:
            raise ConfigError(f"linking {linking!r} unknown (options: {', '.join(LINKING_MODES)})")
        if timelines not in TIMELINE_MODES:
            raise ConfigError(
                f"timelines {timelines!r} unknown (options: {', '.join(TIMELINE_MODES)})"
            )
        unknown = set(thresholds or {}) - set(DEFAULT_THRESHOLDS)
        if unknown:
            raise ConfigError(
                f"unknown thresholds {sorted(unknown)} (options: {sorted(DEFAULT_THRESHOLDS)})"
            )
        self.j, self.linking = int(j), linking
        self.thresholds = {**DEFAULT_THRESHOLDS, **dict(thresholds or {})}
        self.linking_task = linking_task(embedder, self.thresholds)
        self.retriever = TimelineRetriever(
            llm,
            embedder,
            refinement_task(embedder, int(refine_max_events)),
            k=int(k),
            n=int(n),
            context_turns=int(context_turns),
            seed=int(seed),
            max_timelines=int(max_timelines),
            mode=timelines,
        )
        self.graph = MemoryGraph()
        self._turns: dict[str, Turn] = {}
        self.link_log: list[dict[str, Any]] = []

    # --- Phase I: memory graph construction -------------------------------------------------

    def _clear(self) -> None:
        super()._clear()
        self.graph = MemoryGraph()
        self._turns = {}
        self.link_log = []

    def _write(self, session: Session) -> None:
        self.add_turns(session)
        self.add_memories([replace(m, kind="event") for m in self.summarize(session)])

    def add_turns(self, session: Session) -> None:
        """Keep an observed session's turns: the origin dialogues shown to the Fig. 22 prompt."""
        self._turns.update((t.turn_id, t) for t in session.turns)

    def add_memories(self, new: list[MemoryItem]) -> None:
        """Link a session's new memories to G^t (Algorithm 1) and add them, giving G^t+1."""
        old = list(self._items)
        by_id = {m.item_id: m for m in old + new}
        components = self.graph.components()  # of G^t: frozen while the session is linked
        if old and new:  # G^t's memories and the session's (top-k queries here) in one call
            self.embedder.encode([m.text for m in old + new])
        pairs = [(a.item_id, m.item_id) for m in new for a in self._associative(m, old)]
        relations = self._relations([(by_id[a], by_id[b]) for a, b in pairs])
        assigned: dict[str, dict[str, str]] = {m.item_id: {} for m in new}
        for (a, b), rel in zip(pairs, relations, strict=True):
            self.link_log.append({"from": a, "to": b, "relation": rel})
            if rel != NONE:
                assigned[b][a] = rel
        for m in new:
            self.graph.add(m.item_id)
            for target, rel in self.graph.link_targets(assigned[m.item_id], components):
                self.graph.link(target, rel, m.item_id)
        self._items.extend(new)

    def _associative(self, memory: MemoryItem, old: list[MemoryItem]) -> list[MemoryItem]:
        """Return M_a: the top-j memories of G^t most similar to ``memory`` (Phase I-1)."""
        return top_k(self.embedder, old, memory.text, self.j)[0]

    def _relations(self, pairs: list[tuple[MemoryItem, MemoryItem]]) -> list[str]:
        """Return the relation of each (older, newer) pair (Phase I-2; Fig. 22 or ``Similar``)."""
        if self.linking == "temporal":
            return [SIMILAR] * len(pairs)
        if pairs and self.llm.backend.offline:  # the offline rule's cosines: one call, not each
            self.embedder.encode(relation_texts([(a.text, b.text) for a, b in pairs]))
        fields = [
            {
                "dialogue1": self._origin(a),
                "dialogue2": self._origin(b),
                "sentence1": a.text,
                "sentence2": b.text,
            }
            for a, b in pairs
        ]
        return [r.value for r in self.llm.run_many(self.linking_task, fields)] if fields else []

    def _origin(self, memory: MemoryItem) -> str:
        """Return the dialogue a memory came from: its attributed turns (observed ones only)."""
        return render_history([self._turns[t] for t in memory.source_ids if t in self._turns])

    # --- Phase II: timeline retrieval and refinement (``_recall.TimelineRetriever``) ----------

    @property
    def context_turns(self) -> int:
        """Turns of D used as the retrieval query (0: all); ``prefetch`` embeds the same text."""
        return self.retriever.context_turns

    def collect(self, query: Query) -> Collected:
        """Run Phase II-1 for ``query`` (``TimelineRetriever.collect``); no state changes."""
        return self.retriever.collect(query, self.graph, self._items)

    def n_collected(self, query: Query) -> int:
        """Return how many distinct memories THEANINE's timelines bring for ``query``."""
        return len({i for tau in self.collect(query)["timelines"] for i in tau})

    def recall(self, query: Query) -> Recall:
        """Return the collected memories and the refined (or raw/shuffled) timelines as text."""
        self.check_episode(query)
        items, text, collected = self.retriever.retrieve(query, self.graph, self._items)
        info = {
            "method": type(self).__name__,
            "store_size": len(self._items),
            "summary_failures": self.summary_failures,
            **collected,
        }
        return Recall(tuple(items), text, info)

    def offline_lines(self, recall: Recall) -> list[str]:
        """The events of the timelines as the Fig. 24 prompt shows them (refined: the events the
        refinement kept; raw: every event of each timeline), so the offline reply copies what
        the generator would read; shuffled events are the recalled items themselves."""
        if self.retriever.mode == "shuffled":
            return [line for item in recall.items for line in item.text.splitlines()]
        return timeline_units(recall.text)

    # --- snapshots ---------------------------------------------------------------------------

    def snapshot(self) -> list[MemoryItem]:
        """Return the memories with their graph attrs (component, labelled in/out edges)."""
        comp = self.graph.components()
        out = []
        for m in self._items:
            attrs = {
                **m.attrs,
                "time": m.created.isoformat() if m.created else None,
                "component": comp[m.item_id],
                "edges_out": [
                    {"to": e.dst, "relation": e.relation} for e in self.graph.out_edges(m.item_id)
                ],
                "edges_in": [
                    {"from": e.src, "relation": e.relation} for e in self.graph.in_edges(m.item_id)
                ],
            }
            out.append(replace(m, attrs=attrs))
        return out
