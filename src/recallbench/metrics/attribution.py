"""Failure attribution: why a memory method's answer was wrong, one class per failed item.

An *item* is one judged answer of a QA-style protocol (a LUFY question asked after a session, a
GVD probing question, a TeaFarm counterfactual question, a TimeRAG reply whose reference uses a
gold fact). Its facts (``ItemFacts``, gathered from a run folder by
``recallbench.analysis.attribution``):

- ``credit``: the run's *primary* judge's credit in [0, 1]: 1 correct, 0.5 partly correct (CAIM's
  response correctness), 0 incorrect or "don't know". ``outcome`` names which
  (``correct | partial | wrong | dont_know``).
- ``others``: the credit other judges of the same run gave the same answer (GVD runs: the LUFY
  C.1 judge beside CAIM's correctness; a run rescored by further judges).
- ``evidence``: the evidence units (turn ids; TimeRAG: the gold facts the reference uses), ``()``
  when unknown, with ``unknown`` saying why.
- ``held``: the evidence units carried by a live item of the store the question met: an item
  carries a turn when the turn is in its ``source_ids`` (provenance), and it is live unless the
  method marked it gone (``attrs.retained`` false: LUFY's last forgetting; ``attrs.status``
  ``deleted``: TimeRAG). Items without provenance carry nothing (an abstractive profile: we
  cannot tell what it came from). ``ever_held``: the units any item of any snapshot up to
  then carries, live or marked gone (written at some point).
- ``recalled``: the evidence units carried by the items recalled for the question.

A *failure* is an item with credit < 1: wrong, partly correct, or "don't know". LUFY counts a
"don't know" as unanswered (it lowers recall, not precision); here it is a failure like any other
(the question was not answered) and is attributed by the same rules, so an honest abstention on
forgotten evidence is "not in memory" and one with the evidence in the prompt is "reader";
``dont_know`` shares are reported beside the classes. Every failure gets exactly one class, by
the first rule that applies:

1. ``judge_disagreement``: another judge of the run gave the answer full credit (the failure
   itself is in doubt, so the memory pipeline is not blamed). Runs with a single judge cannot
   have it (tables show n/a, not 0).
2. ``evidence_unknown``: the item's evidence is unknown (the dataset gives none and the locator
   found none; GVD's unanswerable questions). Never dropped: its share is reported.
3. ``not_in_memory``: the store the question met did not hold the evidence (``cover``: ``all``
   units, default, or ``any``). ``reason``: ``forgotten`` when an earlier snapshot held it (written,
   then forgotten or deleted; a snapshot keeps the items its last forgetting marked gone, so a
   memory dropped in the session it was written in counts too), else ``never_written`` (the
   method's writer dropped it, or wrote it without provenance). A memory written and removed
   from the store within one session leaves no trace in a snapshot: it counts as never written.
4. ``not_retrieved``: the store held it, the recall for the question did not include it.
5. ``reader_error``: the evidence was recalled and the answer was still judged wrong.

Items the primary judge accepts but another judge rejects are not failures; their number is
reported (``contested_correct``). With ``cover: all`` an answer spread over two turns, one of
them forgotten, is "not in memory": the reader could not have answered fully.
Caveat: provenance is what the method claims; a summary that names a turn but dropped its fact
still "carries" it, so its loss shows up as a retrieval or reader failure.

Shares are ratios over the failures of all items, with episode-clustered bootstrap CIs
(``metrics.bootstrap``: items nest in episodes, and LUFY asks a question again after every
session); accuracy is the mean credit over items.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from recallbench.metrics.bootstrap import RATIO, Additive, ci_fields
from recallbench.verdict import JSONValue

CLASSES = (
    "judge_disagreement",
    "evidence_unknown",
    "not_in_memory",
    "not_retrieved",
    "reader_error",
)
CLASS_LABELS = {
    "judge_disagreement": "judge disagreement",
    "evidence_unknown": "evidence unknown",
    "not_in_memory": "not in memory",
    "not_retrieved": "in memory, not retrieved",
    "reader_error": "retrieved, answered wrong",
}
REASONS = ("forgotten", "never_written")
OUTCOMES = ("correct", "partial", "wrong", "dont_know")

Cover = Literal["all", "any"]


@dataclass(frozen=True)
class ItemFacts:
    """What is known about one judged answer (see the module docstring)."""

    item_id: str
    episode_id: str
    credit: float
    outcome: str
    evidence: tuple[str, ...] = ()
    held: frozenset[str] = frozenset()
    ever_held: frozenset[str] = frozenset()
    recalled: frozenset[str] = frozenset()
    others: Mapping[str, float] = field(default_factory=dict)
    unknown: str = ""

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(
                f"{self.item_id}: outcome must be one of {OUTCOMES}, got {self.outcome!r}"
            )
        if not 0 <= self.credit <= 1:
            raise ValueError(f"{self.item_id}: credit must be in [0, 1], got {self.credit}")

    @property
    def failed(self) -> bool:
        return self.credit < 1


@dataclass(frozen=True)
class Attribution:
    """The class of one failure and the sub-reason (``forgotten``/``never_written``, or why the
    evidence is unknown, or the judge that accepted it)."""

    item_id: str
    episode_id: str
    cls: str
    outcome: str
    reason: str = ""

    def to_dict(self) -> dict[str, str]:
        return {
            "item_id": self.item_id,
            "episode_id": self.episode_id,
            "class": self.cls,
            "outcome": self.outcome,
            "reason": self.reason,
        }


def covers(units: Iterable[str], evidence: Sequence[str], cover: Cover = "all") -> bool:
    """True when ``units`` include all (``cover="all"``) or some (``"any"``) evidence units."""
    have = set(units)
    if cover == "any":
        return any(u in have for u in evidence)
    return bool(evidence) and all(u in have for u in evidence)


def classify(item: ItemFacts, cover: Cover = "all") -> Attribution | None:
    """Return the failure class of ``item`` (None when the primary judge gave full credit)."""
    if cover not in ("all", "any"):
        raise ValueError(f"cover must be 'all' or 'any', got {cover!r}")
    if not item.failed:
        return None

    def out(cls: str, reason: str = "") -> Attribution:
        return Attribution(item.item_id, item.episode_id, cls, item.outcome, reason)

    accepting = sorted(name for name, credit in item.others.items() if credit >= 1)
    if accepting:
        return out("judge_disagreement", f"accepted by {', '.join(accepting)}")
    if not item.evidence:
        return out("evidence_unknown", item.unknown or "no evidence")
    if not covers(item.held, item.evidence, cover):
        forgotten = covers(item.ever_held, item.evidence, cover)
        return out("not_in_memory", "forgotten" if forgotten else "never_written")
    if not covers(item.recalled, item.evidence, cover):
        return out("not_retrieved")
    return out("reader_error")


def contested(item: ItemFacts) -> bool:
    """True when the primary judge accepted the answer and another judge did not."""
    return not item.failed and any(c < 1 for c in item.others.values())


def _share(
    items: Sequence[ItemFacts], hit: Mapping[str, bool], among: Mapping[str, bool]
) -> dict[str, JSONValue]:
    """Ratio of ``hit`` over ``among`` items (by item id), episode-clustered (every episode of
    ``items`` is a cluster, one with no ``among`` item contributes nothing)."""
    rows = [[float(hit.get(i.item_id, False)), float(among.get(i.item_id, False))] for i in items]
    n = int(sum(r[1] for r in rows))
    stat = Additive.from_items([i.episode_id for i in items], rows, RATIO) if items else None
    value = sum(r[0] for r in rows) / n if n else 0.0
    entry: dict[str, JSONValue] = {"value": value, "n": n, "count": int(sum(r[0] for r in rows))}
    entry.update(ci_fields(stat if n else None, reason="no interval: no item in the denominator"))
    return entry


def summarize(
    items: Sequence[ItemFacts], cover: Cover = "all", judges: int | None = None
) -> dict[str, JSONValue]:
    """The attribution summary of a run's items: accuracy, each class's share of the failures
    (``shares``), sub-reasons and outcome shares, each with its episode-clustered CI.

    ``judges``: how many judges scored the run's items (default: 1 + the most ``others`` of an
    item); with one, ``judge_disagreement`` is marked ``applicable: false`` (0 by construction,
    not a finding).
    """
    if judges is None:
        judges = 1 + max((len(i.others) for i in items), default=0)
    attributions = {a.item_id: a for i in items if (a := classify(i, cover)) is not None}
    every = {i.item_id: True for i in items}
    failed = {k: True for k in attributions}
    credit = [[i.credit, 1.0] for i in items]
    accuracy: dict[str, JSONValue] = {
        "value": sum(c for c, _ in credit) / len(items) if items else 0.0
    }
    accuracy["n"] = len(items)
    accuracy.update(
        ci_fields(
            Additive.from_items([i.episode_id for i in items], credit, RATIO) if items else None
        )
    )
    shares = {
        cls: _share(items, {k: a.cls == cls for k, a in attributions.items()}, failed)
        for cls in CLASSES
    }
    if judges < 2:
        shares["judge_disagreement"]["applicable"] = False
    memory = {k: a.cls == "not_in_memory" for k, a in attributions.items()}
    reasons = {
        r: _share(items, {k: a.reason == r for k, a in attributions.items()}, memory)
        for r in REASONS
    }
    outcomes = {
        o: _share(items, {k: a.outcome == o for k, a in attributions.items()}, failed)
        for o in ("partial", "wrong", "dont_know")
    }
    return {
        "items": len(items),
        "episodes": len({i.episode_id for i in items}),
        "failures": len(attributions),
        "failure_rate": _share(items, failed, every),
        "accuracy": accuracy,
        "shares": {**shares},
        "not_in_memory_reasons": {**reasons},
        "failure_outcomes": {**outcomes},
        "contested_correct": sum(contested(i) for i in items),
        "cover": cover,
        "judges": judges,
        "attributions": [{**a.to_dict()} for a in attributions.values()],
    }
