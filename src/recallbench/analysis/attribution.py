"""Failure attribution of a finished run: its judged answers as ``metrics.attribution.ItemFacts``.

    items, info = run_items(run)              # a RunRecord of protocol qa, qa_gvd, teafarm, timerag
    summary = summarize(items, info.cover)    # metrics.attribution

Only the run folder is read (``run.read``): the predictions, the store after every session, the
episodes as replayed (their questions and evidence; runs older than ``episodes/`` reload the
dataset of their config) and the config (the protocol's settings). Per protocol:

- ``qa`` (LUFY Table 11's setting): every ``answer``; primary judge the run's C.1 judge (1 -> 1,
  0 -> 0, 2 -> 0 "don't know"); evidence ``protocols.evidence`` (``auto``: the question's evidence
  ids, else the turns of the question's session that carry the label answer); the store the
  question met is the snapshot after the session it was asked after.
- ``qa_gvd`` (CAIM Table 3's setting): as ``qa``, with two judges: CAIM's response correctness
  (0 / 0.5 / 1; primary by default, ``primary="caim"``, as Table 3 reports it) and the C.1 judge
  (``primary="judge"`` swaps them). Evidence: the answer key's turn ids; GVD's unanswerable
  questions have none (evidence unknown).
- ``teafarm``: every ``teafarm`` reply; the Fig. 29 judge (Correct -> 1); evidence located from
  the correct answer over the replayed history; the store after the last history session.
- ``timerag`` (TimeRAG's MSC setting): every ``response`` whose reference uses gold facts (the
  turns Table V scores); evidence units are those facts (``protocols.timerag.reply_targets``);
  credit 1 when the response contains a target fact as Table V's relevance rule reads it
  (``target_threshold`` of its content words), else 0; a fact is held when a live store item
  (the snapshot before the session) contains it by the same rule, recalled when Table V found
  a relevant item in the recall. A reply's targets are alternatives (the reference uses one),
  so these runs are attributed with ``cover="any"``.

An oracle-context run (``protocol.oracle_context``) gives the same items; its accuracy on the
items with known evidence is the reader ceiling (``oracle_accuracy``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from recallbench.analysis.attribution_locomo import locomo_items
from recallbench.analysis.attribution_reads import (
    carried,
    decayed_of,
    is_oracle,
    live,
    outcome_of,
    protocol_config,
    read_episodes,
    read_stores,
    turn_facts,
)
from recallbench.judges.caim import caim_verdicts
from recallbench.metrics.attribution import Cover, ItemFacts
from recallbench.metrics.bootstrap import RATIO, Additive, ci_fields
from recallbench.protocols.evidence import EvidenceLocator
from recallbench.protocols.timerag import reply_targets, split_single
from recallbench.protocols.timerag import scores as ts
from recallbench.records import Episode, MemoryItem, Prediction, QAItem
from recallbench.run.read import RunRecord
from recallbench.verdict import require_verdict

PROTOCOLS = ("qa", "qa_gvd", "teafarm", "timerag", "locomo_qa")
PRIMARY = ("auto", "caim", "judge")
__all__ = [
    "PROTOCOLS",
    "RunAttribution",
    "carried",
    "decayed_of",
    "is_oracle",
    "known_accuracy",
    "live",
    "protocol_config",
    "read_episodes",
    "read_stores",
    "run_items",
]


@dataclass(frozen=True)
class RunAttribution:
    """How a run's items were read: protocol, judges (primary first), evidence, cover."""

    protocol: str
    judges: tuple[str, ...]
    evidence: str
    cover: Cover
    oracle: bool


def run_items(
    run: RunRecord,
    evidence: Mapping[str, Any] | None = None,
    primary: str = "auto",
    subset: str | None = None,
) -> tuple[list[ItemFacts], RunAttribution]:
    """Return the attribution facts of every judged item of ``run`` and how they were read.

    ``evidence``: locator settings (``protocols.evidence.EvidenceLocator``) over the run's own
    ``protocol.evidence``; ``primary``: which judge decides a qa_gvd item (``caim``, ``judge``);
    ``subset``: a locomo_qa run's items of one category (``analysis.attribution_locomo``).
    """
    proto = protocol_config(run)
    name = str(proto.get("name"))
    if name not in PROTOCOLS:
        raise ValueError(
            f"{run.path}: protocol {name!r} has no items with known evidence "
            f"(attribution reads {', '.join(PROTOCOLS)})"
        )
    if primary not in PRIMARY:
        raise ValueError(f"primary must be one of {PRIMARY}, got {primary!r}")
    preds = list(run.predictions)
    settings = {**dict(proto.get("evidence") or {}), **dict(evidence or {})}
    if name == "locomo_qa":
        items, how = locomo_items(run, preds, subset)
        return items, RunAttribution(name, how["judges"], how["evidence"], "all", how["oracle"])
    if name == "timerag":
        return _timerag_items(run, proto, preds)
    if name == "teafarm":
        return _teafarm_items(run, proto, preds, settings)
    return _qa_items(run, proto, preds, settings, "judge" if primary == "judge" else name)


C1 = {1: 1.0, 0: 0.0, 2: 0.0}


def _qa_items(
    run: RunRecord,
    proto: Mapping[str, Any],
    preds: list[Prediction],
    settings: dict[str, Any],
    primary: str,
) -> tuple[list[ItemFacts], RunAttribution]:
    answers = [p for p in preds if p.kind == "answer"]
    episodes = read_episodes(run, list(dict.fromkeys(p.episode_id for p in answers)))
    stores = {e: read_stores(run, e) for e in episodes}
    decayed = decayed_of(run)
    locator = EvidenceLocator.of(settings)
    user_index = int(proto.get("user_index", -1))
    c1_name = f"C.1 {run.choice('judge') or run.config.protocol.judge.name or 'judge'}"
    caim_name = f"CAIM {run.config.value('protocol.caim_judge.name') or 'judge'}"
    items: list[ItemFacts] = []
    hows: set[str] = set()
    names: dict[str, None] = {}  # judge names, primary first (an ordered set)
    for p in answers:
        episode = episodes[p.episode_id]
        qa = _question(episode, str(p.meta["qa_id"]), run)
        units, unknown, how = _evidence(p, episode, qa, locator, user_index)
        hows.add(how)
        label = require_verdict(p).label
        verdicts = {c1_name: C1[label]}
        caim = caim_verdicts(p)
        correctness = caim.score("response_correctness") if caim else None
        if correctness is not None:
            verdicts[caim_name] = float(correctness)
        first = caim_name if primary == "qa_gvd" and caim_name in verdicts else c1_name
        names[first] = None
        credit = verdicts.pop(first)
        names.update(dict.fromkeys(verdicts))
        outcome = "dont_know" if first == c1_name and label == 2 else outcome_of(credit, p.output)
        stores_ = stores[p.episode_id]
        items.append(
            turn_facts(
                p, credit, outcome, (units, unknown), stores_, p.session_index, verdicts, decayed
            )
        )
    judges = tuple(names) or (c1_name,)
    how = "; ".join(sorted(hows))
    return items, RunAttribution(str(proto.get("name")), judges, how, "all", is_oracle(run))


def _question(episode: Episode, qa_id: str, run: RunRecord) -> QAItem:
    for qa in episode.qa:
        if qa.qa_id == qa_id:
            return qa
    raise ValueError(f"{run.path}: question {qa_id!r} is not in episode {episode.episode_id}")


def _evidence(
    p: Prediction, episode: Episode, qa: QAItem, locator: EvidenceLocator, user_index: int
) -> tuple[tuple[str, ...], str, str]:
    """(turn ids, why unknown, how found): the oracle's record, else located now."""
    oracle = p.meta.get("oracle")
    if isinstance(oracle, Mapping):
        return (
            tuple(oracle.get("turn_ids") or ()),
            str(oracle.get("unknown") or ""),
            str(oracle.get("how")),
        )
    if qa.meta.get("answerable") is False:
        return (), "unanswerable question (answer key)", "answer key (QAItem.evidence)"
    found = locator.locate(episode, qa, episode.speakers[user_index])
    return found.turn_ids, found.unknown, found.how


def _teafarm_items(
    run: RunRecord, proto: Mapping[str, Any], preds: list[Prediction], settings: dict[str, Any]
) -> tuple[list[ItemFacts], RunAttribution]:
    replies = [p for p in preds if p.kind == "teafarm"]
    episodes = read_episodes(run, list(dict.fromkeys(p.episode_id for p in replies)))
    locator = EvidenceLocator.of(settings, mode="answer_turns", scope="history")
    keep = proto.get("history_sessions") or None
    items, hows = [], set()
    for p in replies:
        episode = episodes[p.episode_id]
        history = episode.sessions[:keep] if keep else episode.sessions
        last = history[-1].index
        if isinstance(oracle := p.meta.get("oracle"), Mapping):
            found = (tuple(oracle.get("turn_ids") or ()), str(oracle.get("unknown") or ""))
            hows.add(str(oracle.get("how")))
        else:
            qa = QAItem(str(p.meta["qid"]), str(p.meta["question"]), (p.reference or "",), last)
            got = locator.locate(episode, qa, str(p.meta.get("responder")), history)
            found = (got.turn_ids, got.unknown)
            hows.add(got.how)
        credit = float(require_verdict(p).correct)
        stores = read_stores(run, p.episode_id)
        outcome = outcome_of(credit, p.output)
        items.append(turn_facts(p, credit, outcome, found, stores, last, {}, decayed_of(run)))
    judges = tuple(sorted({f"TeaFarm Fig. 29 ({require_verdict(p).backend})" for p in replies}))
    how = "; ".join(sorted(hows))
    return items, RunAttribution(
        "teafarm", judges or ("TeaFarm Fig. 29",), how, "all", is_oracle(run)
    )


def _timerag_items(
    run: RunRecord, proto: Mapping[str, Any], preds: list[Prediction]
) -> tuple[list[ItemFacts], RunAttribution]:
    replies = [p for p in preds if p.kind == "response" and p.meta.get("retrieval")]
    episodes = read_episodes(run, list(dict.fromkeys(p.episode_id for p in replies)))
    if proto.get("split_single_session", True):
        episodes = {k: split_single(e) for k, e in episodes.items()}
    threshold = float(proto.get("target_threshold", ts.TARGET_THRESHOLD))
    overlap = int(proto.get("target_min_overlap", ts.TARGET_MIN_OVERLAP))
    stores = {e: read_stores(run, e) for e in episodes}
    decayed = decayed_of(run)
    items = []
    for p in replies:
        episode = episodes[p.episode_id]
        targets = reply_targets(episode, p.session_index, p.reference or "", threshold, overlap)
        units = tuple(f"{who}: {fact}" for who, fact in targets)
        facts = [ts.content(f) for _, f in targets]

        before = {s: got for s, got in stores[p.episode_id].items() if s < p.session_index}
        held = {
            s: _holding(got, units, facts, episode.speakers, threshold, decayed=decayed)
            for s, got in before.items()
        }
        ever = [
            _holding(got, units, facts, episode.speakers, threshold, True)
            for got in before.values()
        ]
        said = ts.content(p.output)
        credit = float(any(ts.containment(f, said) >= threshold for f in facts))
        recalled = set(units) if (p.meta["retrieval"] or {}).get("ranks") else set()
        items.append(
            ItemFacts(
                p.pred_id,
                p.episode_id,
                credit,
                outcome_of(credit, p.output),
                units,
                frozenset(held[max(held)] if held else ()),
                frozenset(set().union(*ever)),
                frozenset(recalled),
                {},
                "" if units else "the reference uses no gold fact",
            )
        )
    how = f"gold facts the reference reply uses (threshold {threshold}, min overlap {overlap})"
    judge = ("gold-fact use in the response (Table V relevance rule)",)
    return items, RunAttribution("timerag", judge, how, "any", is_oracle(run))


def _holding(
    store: Sequence[MemoryItem],
    units: Sequence[str],
    facts: Sequence[frozenset[str]],
    names: Sequence[str],
    threshold: float,
    gone: bool = False,
    decayed: bool = False,
) -> set[str]:
    """The fact units some live item of ``store`` (``gone``: any item) contains (Table V's
    relevance rule; ``decayed``: the method recalls decayed records)."""
    values = [
        ts.content(str(i.attrs.get("value") or i.text), names)
        for i in store
        if gone or live(i, decayed)
    ]
    return {
        u
        for u, f in zip(units, facts, strict=True)
        if any(ts.containment(f, v) >= threshold for v in values)
    }


def known_accuracy(items: Sequence[ItemFacts]) -> dict[str, Any]:
    """Mean credit over the items with known evidence, with its episode-clustered CI."""
    known = [i for i in items if i.evidence]
    rows = [[i.credit, 1.0] for i in known]
    entry: dict[str, Any] = {"value": sum(r[0] for r in rows) / len(rows) if rows else 0.0}
    entry["n"] = len(rows)
    stat = Additive.from_items([i.episode_id for i in known], rows, RATIO) if rows else None
    entry.update(ci_fields(stat, reason="no item with known evidence"))
    return entry
