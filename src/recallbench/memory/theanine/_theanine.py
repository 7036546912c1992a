"""THEANINE: timeline-based memory management for lifelong dialogue agents.

Paper: Ong, Kim, Gwak, Chae, Kwon, Jo, Hwang, Lee, Yeo, "Towards Lifelong Dialogue Agents via
Timeline-based Memory Management", NAACL 2025 (sec. 2, App. B, Algorithms 1-2, App. H prompts).

Implemented:
- Phase I (``observe``): each finished session is summarized into memories m = (event, time)
  with the shared per-session summarization task ``memory.summarize_session``
  (``session_summaries``; item ``created`` = session start). For every new memory the top-j
  (j = 3) most similar memories of G^t are its associative memories M_a (I-1); each pair gets a
  relation from the Fig. 22 prompt over the 7 relations + None, given both memories' origin
  dialogues (task ``theanine.link_relation``, stage ``memory``) (I-2); m_new is linked to the most
  recent assigned memory of each connected component of G^t (Algorithm 1; ``theanine_graph``).
  No memory is ever updated or removed.
- Phase II (``recall``): top-k (k = 3) memories with the dialogue context D as query; for each,
  its raw timelines from the component's oldest memory through it to out-degree-0 ends (Eq. 10);
  n = 1 timeline sampled per retrieved memory with a seeded RNG keyed by the test instance
  (II-1); each timeline refined for D with the Fig. 23 prompt (task
  ``theanine.refine_timeline``) (II-2).
- Phase III (``prompt``): the Fig. 24 response prompt (``_common.THEANINE_RESPONSE_PROMPT``)
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

Deviations:
- Embedder: the configured one (MiniLM offline), not text-embedding-3-small.
- The paper prints no summarization prompt: the shared ``_common.SUMMARY_PROMPT`` is ours.
- Origin dialogue of a memory: the turns it was attributed to (``_common.attribute``), as in the
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

import hashlib
import random
import re
from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache, partial
from typing import Any, Literal

import numpy as np

from recallbench.errors import ConfigError
from recallbench.llm.task import ParseError, PromptTask
from recallbench.memory._base import render_history
from recallbench.memory._common import PromptStyle, query_text, top_k
from recallbench.memory.session_summaries import SessionSummaries
from recallbench.memory.theanine._graph import MemoryGraph
from recallbench.records import MemoryItem, Query, Recall, Session, Turn
from recallbench.text import content_words, porter_stem

# THEANINE App. H Fig. 22 "Prompt for Relation-aware Memory Linking", verbatim; line breaks
# restored from the figure's layout (the text extraction joins items 5-6 and 7-8).
LINKING_PROMPT = (
    "Your task is to find the relation between [Sentence A] and [Sentence B]. Keep in mind "
    "that [Sentence A] happened before [Sentence B]. The dialogues where each of the sentence "
    "is originated from are provided to help your reasoning.\n\n"
    "First, identify if the relation holds among the following six relations:\n\n"
    "1. Changed: when events in [Sentence A] changed to events in [Sentence B]\n"
    "2. Cause: when events in [Sentence A] caused events in [Sentence B]\n"
    "3. Reason: when events in [Sentence A] are due to events in [Sentence B]\n"
    "4. HinderedBy: when events in [Sentence B] can be hindered by events in [Sentence A], and "
    "vice versa\n"
    "5. React: when, as a result of events in [Sentence A], the subject feels as mentioned in "
    "[Sentence B]\n"
    "6. Want: when, as a result of events in [Sentence A], the subject wants events in "
    "[Sentence B] to happen.\n\n"
    "Then, if the relation does not belong to any of the relations from 1 to 6, choose between "
    "the following two options:\n\n"
    "7. SameTopic: when the specific topic addressed in [Sentence A] is also discussed in "
    "[Sentence B]\n"
    "8. None: when [Sentence A] and [Sentence B] are irrelevant\n\n"
    "- For relations from 1 to 7, choose them only if there is clear evidence that matches the "
    'description of the relation. Otherwise, just choose "None" without making excessive '
    "inferences beyond the given sentence.\n"
    "- Pay attention to who the subject of each sentence is.\n"
    "- Do not confuse the roles of [Sentence A] and [Sentence B] when determining the "
    "relationship.\n\n"
    "Follow the format of this example output:\n"
    "<OUTPUT>\n"
    "- Explanation: (your_explanation)\n"
    "- Relation: (predicted_relation)\n\n"
    "Now, read the two dialogues and find the relation between [Sentence A] and [Sentence B].\n\n"
    "<INPUT>\n"
    "[Dialogue for Sentence A]: {dialogue1}\n"
    "[Dialogue for Sentence B]: {dialogue2}\n\n"
    "[Sentence A]: {sentence1}\n"
    "[Sentence B]: {sentence2}\n\n"
    "<OUTPUT>"
)
LINKING_SOURCE = "THEANINE (Ong et al., NAACL 2025) App. H Fig. 22, verbatim"

# THEANINE App. H Fig. 23 "Prompt for Context-aware Timeline Refinement", verbatim (including
# "an language model" and "[Sentence A]" in item 4); line breaks restored from the layout.
REFINEMENT_PROMPT = (
    "Given Timelines, which are structured in this format: [Event A] - (relation) - [Event B] "
    "..., your job is to naturally transform each timeline into useful information that can "
    "help an language model to generate a proper next response for Current Dialogue.\n\n"
    "These are the explanation of each relation type:\n\n"
    "1. Changed: when events in [Event A] changed to events in [Event B]\n"
    "2. Cause: when events in [Event A] caused events in [Event B]\n"
    "3. Reason: when events in [Event A] are due to events in [Event B]\n"
    "4. HinderedBy: when events in [Event B] can be hindered by events in [Sentence A], and "
    "vice versa\n"
    "5. React: when, as a result of events in [Event A], the subject feels as mentioned in "
    "[Event B]\n"
    "6. Want: when, as a result of events in [Event A], the subject wants events in [Event B] "
    "to happen\n"
    "7. SameTopic: when the specific topic addressed in [Event A] is also discussed in "
    "[Event B]\n\n"
    "If a given relation is not proper, naturally connect them without using that relation.\n\n"
    "Current Dialogue: {current_dialogue_context}\n\n"
    "Timelines: {input_path}\n\n"
    "Your Outputs (only the transformed timelines):"
)
REFINEMENT_SOURCE = "THEANINE (Ong et al., NAACL 2025) App. H Fig. 23, verbatim"

RELATIONS = ("Changed", "Cause", "Reason", "HinderedBy", "React", "Want", "SameTopic")
NONE = "None"
LABELS = (*RELATIONS, NONE)
SIMILAR = "Similar"  # the unlabelled temporal/similarity edge of ``linking: temporal``
LINKING_MODES = ("relation", "temporal")
TIMELINE_MODES = ("refined", "raw", "shuffled")
DEFAULT_THRESHOLDS = {"none_cos": 0.05, "strong_cos": 0.6}

_CANON = {label.lower(): label for label in LABELS} | {"causes": "Cause"}
_LABEL_ANY = re.compile(
    r"\b(changed|causes?|reason|hindered\s*by|react|want|same\s*topic|none)\b", re.I
)
_LABEL_EXACT = re.compile(r"\b(" + "|".join(LABELS) + r")\b")
_TAG = re.compile(r"^([^:\n]{1,40}):\s+(.+)$", re.S)
_NEGATION = re.compile(r"\b(?:not|no|never|nothing|none|cannot)\b|n't\b")
_CHANGE = re.compile(
    r"\b(?:now|no longer|anymore|any more|instead|chang\w*|switch\w*|quit|stopp\w*|sold|"
    r"recover\w*|moved|finally|decided|became|turned|replaced|gave up|used to)\b"
)
_WANT = re.compile(
    r"\b(?:wants?|wanted|plan\w*|hop(?:e|es|ed|ing)|wish\w*|would like|going to|"
    r"intend\w*|looking forward)\b"
)
_FEEL = re.compile(
    r"\b(?:feels?|felt|happy|glad|sad|excited|worried|proud|upset|angry|nervous|relieved|"
    r"scared|afraid|disappointed|grateful)\b"
)
_CONNECTIVE = {
    "Changed": "Later, this changed:",
    "Cause": "This caused:",
    "Reason": "This was due to:",
    "HinderedBy": "This could be hindered by:",
    "React": "In reaction:",
    "Want": "As a result, there was a wish:",
    "SameTopic": "On the same topic:",
}


# --- relation-aware linking (Fig. 22) --------------------------------------------------------


def parse_relation(reply: str) -> str:
    """Return the Fig. 22 label of a reply: the label on its ``Relation:`` line, else the only
    distinct label (exact case) in the reply. Raises ParseError otherwise."""
    for line in reply.splitlines():
        body = line.strip().lstrip("-*• ").strip()
        if body.lower().startswith("relation"):
            found = _LABEL_ANY.search(body[len("relation") :])
            if found:
                return _CANON[re.sub(r"\s+", "", found.group(1)).lower()]
    labels = set(_LABEL_EXACT.findall(reply))
    if len(labels) == 1:
        return labels.pop()
    raise ParseError(f"no single relation ({', '.join(LABELS)}) in reply {reply[:80]!r}")


def split_subject(text: str) -> tuple[str, str]:
    """Return ``(subject, body)``: a ``speaker: text`` tag, else the sentence's first word."""
    tagged = _TAG.match(text.strip())
    if tagged:
        return tagged.group(1).strip(), tagged.group(2).strip()
    first = text.strip().split(" ", 1)[0].strip(",.'’s").lower()
    return first, text.strip()


@lru_cache(maxsize=65536)
def _stems(text: str) -> frozenset[str]:
    return frozenset(porter_stem(w) for w in content_words(text))


def relation_rule(
    sentence1: str, sentence2: str, cos: float, thresholds: Mapping[str, float]
) -> tuple[str, str]:
    """Return ``(label, explanation)`` of the offline relation classifier (module docstring)."""
    subj1, body1 = split_subject(sentence1)
    subj2, body2 = split_subject(sentence2)
    shared = _stems(body1) & _stems(body2)
    if cos < thresholds["none_cos"] or (not shared and cos < thresholds["strong_cos"]):
        return NONE, f"no shared content word and cosine {cos:.2f}"
    topic = ", ".join(sorted(shared)) or f"cosine {cos:.2f}"
    lower1, lower2 = body1.lower(), body2.lower()
    if subj1.lower() == subj2.lower():
        flip = bool(_NEGATION.search(lower1)) != bool(_NEGATION.search(lower2))
        if flip or _CHANGE.search(lower2):
            return "Changed", f"same subject, same topic ({topic}), a change cue in B"
        if _WANT.search(lower2):
            return "Want", f"same subject, same topic ({topic}), a wish in B"
    if _FEEL.search(lower2):
        return "React", f"same topic ({topic}), a feeling in B"
    return "SameTopic", f"shared topic ({topic})"


def _cosine(embedder: Any, a: str, b: str) -> float:
    vecs = embedder.encode([a, b])
    return float(np.dot(vecs[0], vecs[1]))


def extractive_relation(
    *, sentence1: str, sentence2: str, embedder: Any, thresholds: Mapping[str, float], **_: Any
) -> str:
    """Offline Fig. 22 reply: ``relation_rule`` in the prompt's output format."""
    cos = _cosine(embedder, split_subject(sentence1)[1], split_subject(sentence2)[1])
    label, why = relation_rule(sentence1, sentence2, cos, thresholds)
    return f"- Explanation: {why}\n- Relation: {label}"


def linking_task(embedder: Any, thresholds: Mapping[str, float]) -> PromptTask:
    """Return the Fig. 22 relation task (fallback None: an unparseable reply adds no edge)."""
    offline = partial(extractive_relation, embedder=embedder, thresholds=dict(thresholds))
    return PromptTask(
        name="theanine.link_relation",
        template=LINKING_PROMPT,
        parse=parse_relation,
        offline=offline,
        fallback=NONE,
        stage="memory",
        max_tokens=128,
        source=LINKING_SOURCE,
    )


# --- context-aware refinement (Fig. 23) ------------------------------------------------------


def parse_refinement(reply: str) -> str:
    """Return the refined timeline text (an echoed ``Your Outputs`` header removed)."""
    text = re.sub(r"^\s*your outputs?[^:\n]*:\s*", "", reply.strip(), flags=re.I).strip()
    if not re.search(r"[^\W\d_]", text):
        raise ParseError(f"empty refinement in reply {reply[:80]!r}")
    return text


def render_timeline(events: list[tuple[str, str | None]]) -> str:
    """Render ``[(event, relation into it)]`` as Fig. 23's ``[A] - (relation) - [B] ...``."""
    parts = []
    for text, relation in events:
        if parts:
            parts.append(f"({relation})")
        parts.append(f"[{text}]")
    return " - ".join(parts)


def extractive_refinement(
    *,
    events: list[tuple[str, str | None]],
    anchor: int,
    query: str,
    embedder: Any,
    max_events: int,
    **_: Any,
) -> str:
    """Offline Fig. 23 reply: the timeline in order, trimmed to the retrieved memory ``anchor``
    plus the events most similar to ``query`` (``max_events`` in all), with connectives."""
    keep = set(range(len(events)))
    if len(events) > max_events:
        sims = embedder.encode([query] + [text for text, _ in events])
        scores = sims[1:] @ sims[0]
        ranked = sorted((i for i in keep if i != anchor), key=lambda i: (-scores[i], i))
        keep = {anchor, *ranked[: max_events - 1]}
    out: list[str] = []
    prev = None
    for i in sorted(keep):
        text, relation = events[i]
        if prev is not None:
            adjacent = prev == i - 1 and relation in _CONNECTIVE
            out.append(_CONNECTIVE[relation] if adjacent else "Later:")
        out.append(text.rstrip(".") + ".")
        prev = i
    return " ".join(out)


def refinement_task(embedder: Any, max_events: int) -> PromptTask:
    """Return the Fig. 23 refinement task (stage ``answer``; fallback: the raw timeline)."""
    offline = partial(extractive_refinement, embedder=embedder, max_events=max_events)
    return PromptTask(
        name="theanine.refine_timeline",
        template=REFINEMENT_PROMPT,
        parse=parse_refinement,
        offline=offline,
        fallback=None,
        stage="answer",
        max_tokens=256,
        source=REFINEMENT_SOURCE,
    )


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
        llm: Any,
        embedder: Any,
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
        self.j, self.k, self.n = int(j), int(k), int(n)
        self.context_turns = int(context_turns)
        self.linking, self.timeline_mode, self.seed = linking, timelines, int(seed)
        self.max_timelines = int(max_timelines)
        self.thresholds = {**DEFAULT_THRESHOLDS, **dict(thresholds or {})}
        self.linking_task = linking_task(embedder, self.thresholds)
        self.refinement_task = refinement_task(embedder, int(refine_max_events))
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

    # --- Phase II: timeline retrieval and refinement ---------------------------------------

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
