"""Protocol ``timerag``: TimeRAG-Memory's dialogue evaluation (Sun et al. 2023, sec. 4, 5;
Tables IV, V, VI, VIII, IX, XI; Fig. 4).

The response protocol (``protocols.response``: the method observes every session before a target
session, then answers each turn of it from its own prompt) plus what the paper measures beside
ROUGE-L and BERTScore, defined in ``protocols.timerag.scores``:

- after every observed session, the method's written memory is matched to the gold persona
  facts known so far (``memory_write`` records: Table IV writing precision/recall/F1);
- per response, the ranks at which the method's recall holds the gold fact the reference reply
  uses (Table V Recall@1/5, MRR; Fig. 4 per session), the persona consistency of the response
  (PersonaConsF1), the prompt tokens and the recall + generation time (Table XI);
- per response, an NLI judge over (statement, response) pairs (``judges.nli``): ContradRate.
  Pairs of one session are sent together (``run_many``: concurrent on API backends).

Gold facts: ``Session.gold["persona"]`` ({speaker: [facts]}). For MSC it is the running persona
summary after that session (``datasets.msc``), so the facts known before session k are those of
session k - 1; Persona-Chat's personas are given for the whole dialogue.

Settings (``conf/protocol/response_timerag.yaml``), beyond those of ``response``:
- ``split_single_session``: Persona-Chat dialogues are one session, so a memory written after it
  could never be used. The dialogue is split at its middle turn into sessions 1 and 2 (same
  clock time, same personas): the method observes the first half and answers the second.
- ``premises``: the NLI statements of a response. ``paper``: the responding speaker's persona on
  Persona-Chat, the recalled memory values (top-K evidence) elsewhere (sec. 4, as written; a
  method that recalls nothing, e.g. No-Memory, then has no pair and is never contradictory);
  ``gold``: the responding speaker's gold facts known before the session, the same for every
  method. ``nli_max_premises`` caps the pairs per response.
- ``match_threshold``, ``target_threshold``, ``target_min_overlap``: the matching rules.
- ``oracle_context`` (not in the paper): each reply is generated from its relevance targets (the
  gold facts known before the session that the reference reply uses, ``reply_targets``) in
  place of the method's recall, one fact per line through the method's own prompt; a turn
  without a target gets an empty memory. Failure attribution reads it as the reader ceiling.

Deviations: the paper does not define the gold facts, the matching, the retrieval target or
PersonaConsF1 (see ``scores.py``), nor which sessions are answered: every session after the
first (MSC 2-5 where present). The tables' baselines answer in TimeRAG's template as the paper's
do (``no_memory_timerag``, ``full_history_timerag``, ``summary_memory``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from recallbench.judges.nli import NLI_TASK, UNAVAILABLE
from recallbench.llm.protocol import LLMClient
from recallbench.metrics.summary import Summary
from recallbench.protocols.response import ResponseProtocol
from recallbench.protocols.timerag import scores as ts
from recallbench.records import (
    Episode,
    MemoryItem,
    Prediction,
    Query,
    Recall,
    Score,
    Session,
    Turn,
)

PREMISES = ("paper", "gold")


def split_single(episode: Episode) -> Episode:
    """A one-session episode as two sessions split at the middle turn (same time and gold)."""
    if len(episode.sessions) != 1 or len(episode.sessions[0].turns) < 4:
        return episode
    s = episode.sessions[0]
    half = len(s.turns) // 2
    first = replace(s, session_id=f"{s.session_id}#1", turns=s.turns[:half])
    second = replace(s, session_id=f"{s.session_id}#2", index=2, turns=s.turns[half:])
    return replace(episode, sessions=(first, second))


def gold_facts(episode: Episode, index: int) -> dict[str, list[str]]:
    """The gold persona facts of session ``index`` ({speaker: facts}; {} when it has none)."""
    for s in episode.sessions:
        if s.index == index:
            persona = s.gold.get("persona") or {}
            return {str(k): [str(f) for f in v] for k, v in dict(persona).items()}
    return {}


def known_before(episode: Episode, index: int) -> dict[str, list[str]]:
    """Facts known before session ``index``: the latest earlier session's gold persona."""
    for s in sorted(episode.sessions, key=lambda s: -s.index):
        if s.index < index and s.gold.get("persona"):
            return gold_facts(episode, s.index)
    if episode.dataset == "persona_chat":  # given personas: known from the start
        return gold_facts(episode, index)
    return {}


def reply_targets(
    episode: Episode,
    index: int,
    reference: str,
    threshold: float = ts.TARGET_THRESHOLD,
    min_overlap: int = ts.TARGET_MIN_OVERLAP,
) -> list[tuple[str, str]]:
    """The (speaker, fact) pairs known before session ``index`` that ``reference`` uses."""
    known = known_before(episode, index)
    pairs = [(speaker, fact) for speaker, fs in known.items() for fact in fs]
    chosen = ts.relevance_targets(
        [ts.content(f) for _, f in pairs], ts.content(reference), threshold, min_overlap
    )
    return [pairs[j] for j in chosen]


def _value(item: MemoryItem) -> str:
    """What a memory says: a structured record's ``value`` (Table II), else the item's text."""
    return str(item.attrs.get("value") or item.text)


class TimeRAGProtocol(ResponseProtocol):
    """Response generation with TimeRAG's writing, retrieval, consistency and cost measures."""

    name = "timerag"

    @classmethod
    def check_metrics(cls, names: Sequence[str]) -> None:
        """TimeRAG's own measures (``scores.METRICS``); any other name must be a
        reference-based metric (``EvalProtocol``)."""
        super().check_metrics([m for m in names if m not in ts.METRICS])

    def __init__(
        self,
        target_sessions: Sequence[int] = (2, 3, 4, 5),
        split_single_session: bool = True,
        premises: str = "paper",
        nli_max_premises: int = 5,
        match_threshold: float = ts.MATCH_THRESHOLD,
        target_threshold: float = ts.TARGET_THRESHOLD,
        target_min_overlap: int = ts.TARGET_MIN_OVERLAP,
        **kwargs: Any,
    ) -> None:
        super().__init__(target_sessions=tuple(target_sessions), **kwargs)
        if premises not in PREMISES:
            raise ValueError(f"timerag: premises must be one of {PREMISES}, got {premises!r}")
        self.split_single_session = bool(split_single_session)
        self.premises = premises
        self.nli_max_premises = int(nli_max_premises)
        self.match_threshold = float(match_threshold)
        self.target_threshold = float(target_threshold)
        self.target_min_overlap = int(target_min_overlap)

    def needs(self) -> frozenset[str]:
        """A one-session episode is split in two when ``split_single_session``: no need."""
        return frozenset() if self.split_single_session else super().needs()

    def view(self, episode: Episode) -> Episode:
        return split_single(episode) if self.split_single_session else episode

    def oracle(self, episode: Episode, turn: Turn, query: Query) -> Recall:
        """The reply's relevance targets as the recall (``oracle_context``)."""
        targets = reply_targets(
            episode,
            query.session_index,
            turn.text,
            self.target_threshold,
            self.target_min_overlap,
        )
        items = tuple(
            MemoryItem(
                f"oracle/fact{j}", fact, "fact", query.now, (), {"value": fact, "speaker": who}
            )
            for j, (who, fact) in enumerate(targets)
        )
        info = {"method": "oracle", "evidence": [fact for _, fact in targets]}
        return Recall(items, "\n".join(i.text for i in items), info)

    def annotate(self, pred: Prediction, episode: Episode, query: Query, recall: Recall) -> None:
        names = episode.speakers
        known = known_before(episode, query.session_index)
        facts = [ts.content(f) for fs in known.values() for f in fs]
        targets = ts.relevance_targets(
            facts,
            ts.content(pred.reference or ""),
            self.target_threshold,
            self.target_min_overlap,
        )
        items = [ts.content(_value(item), names) for item in recall.items]
        pred.meta["retrieval"] = (
            {
                "targets": len(targets),
                "ranks": ts.relevant_ranks(
                    items, [facts[j] for j in targets], self.target_threshold
                ),
            }
            if targets
            else None
        )
        own = [ts.content(f) for f in known.get(query.speaker, [])]
        pred.meta["persona_cons"] = (
            ts.persona_consistency(ts.content(pred.output), own) if own else None
        )
        pred.meta["premises"] = self._premises(episode, query, recall, known)

    def _premises(
        self, episode: Episode, query: Query, recall: Recall, known: dict[str, list[str]]
    ) -> list[str]:
        if self.premises == "gold" or episode.dataset == "persona_chat":
            statements = known.get(query.speaker, [])
        else:
            statements = [_value(i) for i in recall.items]
        return statements[: self.nli_max_premises]

    def session_done(
        self, episode: Episode, session: Session, preds: list[Prediction], llm: LLMClient
    ) -> None:
        """Judge every (premise, response) pair of the session at once; label the responses."""
        if llm.backend.offline:
            for p in preds:
                p.meta["contradiction"] = None
                p.meta["nli_unavailable"] = UNAVAILABLE
            return
        jobs = [(i, s) for i, p in enumerate(preds) for s in p.meta["premises"]]
        fields = [{"premise": s, "hypothesis": preds[i].output} for i, s in jobs]
        results = llm.run_many(NLI_TASK, fields, progress=False) if fields else []
        labels: dict[int, list[str | None]] = {i: [] for i in range(len(preds))}
        for (i, _), res in zip(jobs, results, strict=True):
            labels[i].append(None if res.failure else res.value)
        for i, p in enumerate(preds):
            got = labels[i]
            p.meta["nli"] = got
            if "contradiction" in got:
                p.meta["contradiction"] = True
            elif None in got:
                p.meta["contradiction"] = None  # a pair is unjudged and none contradicts
            else:
                p.meta["contradiction"] = False

    def observed(
        self, episode: Episode, session: Session, snapshot: list[MemoryItem]
    ) -> list[Prediction]:
        """Writing quality of the memory after ``session`` against its gold facts."""
        gold = gold_facts(episode, session.index)
        if not gold:
            return []
        written = [i for i in snapshot if i.attrs.get("status") != "deleted"]
        memories = [
            (i.attrs.get("speaker"), ts.content(_value(i), episode.speakers)) for i in written
        ]
        facts = [(speaker, ts.content(f)) for speaker, fs in gold.items() for f in fs]
        matches = ts.match_written(memories, facts, self.match_threshold)
        return [
            Prediction(
                pred_id=f"{session.session_id}/memory_write",
                episode_id=episode.episode_id,
                session_index=session.index,
                kind="memory_write",
                prompt_hash="",
                output="",
                meta={
                    "matched": len(matches),
                    "written": len(written),
                    "facts": len(facts),
                    "matches": [[written[i].item_id, j, round(f1, 4)] for i, j, f1 in matches],
                },
            )
        ]

    def score(
        self, predictions: Sequence[Prediction], metric_names: Sequence[str] = ()
    ) -> tuple[list[Score], Summary]:
        """ROUGE-L/BERTScore of the responses and the TimeRAG measures (``scores.py``)."""
        self.check_metrics(metric_names)
        return ts.score_timerag(predictions, metric_names)
