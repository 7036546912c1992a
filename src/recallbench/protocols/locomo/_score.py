"""The summary of a ``locomo_qa`` run: F1, J and recall@k, pooled and per category.

Each metric's entry is ``metrics.bootstrap.clustered_entry`` over (episode, session, [x, 1])
rows (the value is the mean of x; the interval resamples conversations), with ``subsets`` per
category name and ``answerable`` (categories 1-4, the set Mem0 reports). Items:

- ``f1``: every answered question (LoCoMo's F1 of its category, ``_scoring.locomo_f1``);
- ``j``: the questions the judge labelled (categories 1-4), 1 for CORRECT;
- ``j_<name>``: more judges' credit in [0, 1] from ``meta["judges"]`` (an imported run's shipped
  verdicts per judgment, their mean and majority, and the offline judges: ``locomo_import``);
- ``b1``, ``f1_mem0``: categories 1-4 (Mem0 skips 5), Mem0's BLEU-1 and Mem0's own token-set F1
  against the release's answer (``_mem0_scores``);
- ``recall_at_5``, ``recall_at_10``, ``evidence_recall``: questions with evidence; the share of
  their evidence turns among the sources of the first 5 / 10 / all recalled items.

Under errata (``_errata``): a question marked ``no_key`` has no F1, B1 or Mem0's F1; every
metric gains the ``clean`` subset, ``ceiling`` and
``ceiling_f1`` are scored, ``errata`` counts corrections, conflicts and verdicts judged against
the release's key (then ``metrics.j.key`` says so). ``latency``: p50/p95 per timed stage
(``_latency``).

A question whose answering call failed is not scored (``failed_calls_not_scored``), as for
every reference-based metric of the house (``metrics.scoring``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from recallbench.llm.task import CALL_FAILURE, PARSE_FAILURE
from recallbench.metrics.bootstrap import clustered_entry
from recallbench.payloads import answer_meta
from recallbench.protocols.base import JudgedSummary
from recallbench.protocols.locomo._errata import (
    ceiling_values,
    clean_subsets,
    errata_summary,
    no_key,
    release_key_judges,
)
from recallbench.protocols.locomo._latency import latency_summary
from recallbench.protocols.locomo._mem0_scores import mem0_b1, mem0_f1
from recallbench.protocols.locomo._scoring import locomo_f1, recall_at
from recallbench.records import Prediction, Score
from recallbench.verdict import JSONValue, verdict_of

RECALL_K: dict[str, int | None] = {"recall_at_5": 5, "recall_at_10": 10, "evidence_recall": None}
METRICS = ("f1", "j", "b1", "f1_mem0", *RECALL_K, "ceiling", "ceiling_f1")
Row = tuple[str, int, list[float]]


def item_values(p: Prediction) -> dict[str, float]:
    """The per-question values of one answer prediction (absent: not scored for that metric)."""
    meta = answer_meta(p)
    category = meta["category"]
    out: dict[str, float] = {}
    if not no_key(p):  # an erratum's remark in place of an answer: no key to score against
        out["f1"] = locomo_f1(category, p.output, p.reference or "")
    if category != 5 and "f1" in out:  # Mem0's evaluation skips category 5
        out["b1"] = mem0_b1(p.output, p.reference or "")
        out["f1_mem0"] = mem0_f1(p.output, p.reference or "")
    verdict = verdict_of(p)
    if verdict is not None:
        out["j"] = float(verdict.correct)
    for name, credit in (meta.get("judges") or {}).items():  # more judges: j_<name>, in [0, 1]
        out[f"j_{name}"] = float(credit)
    for name, k in RECALL_K.items():
        value = recall_at(meta.get("evidence") or [], meta.get("recalled_sources") or [], k)
        if value is not None:
            out[name] = value
    return out | ceiling_values(p)


def _entry(rows: list[tuple[Row, list[str]]]) -> dict[str, Any]:
    entry = clustered_entry([r for r, _ in rows], per_session=False)
    subsets = sorted({s for _, subs in rows for s in subs})
    entry["subsets"] = {
        s: clustered_entry([r for r, subs in rows if s in subs], per_session=False) for s in subsets
    }
    return entry


class LocomoSummary(JudgedSummary, total=False):
    """A ``locomo_qa`` run's summary: a judged protocol's, with the errata and the timing."""

    errata_items: int  # answers corrected by the errata
    errata: dict[str, JSONValue]  # under errata: sources, counts, conflicts
    latency: dict[str, JSONValue]  # p50/p95 seconds per timed stage (``_latency``)


def score_locomo(predictions: Sequence[Prediction]) -> tuple[list[Score], LocomoSummary]:
    """Return per-answer scores and the run summary of a ``locomo_qa`` run."""
    answers = [p for p in predictions if p.kind == "answer"]
    scored = [p for p in answers if not (p.failure or "").startswith(CALL_FAILURE)]
    rows: dict[str, list[tuple[Row, list[str]]]] = {m: [] for m in METRICS}
    scores: list[Score] = []
    for p in scored:
        subsets = [*answer_meta(p).get("subsets", []), *clean_subsets(p)]
        for name, value in item_values(p).items():
            scores.append(Score(p.pred_id, name, value))
            rows.setdefault(name, []).append(
                ((p.episode_id, p.session_index, [value, 1.0]), subsets)
            )
    verdicts = [v for v in map(verdict_of, answers) if v is not None]
    metrics = {name: _entry(r) for name, r in rows.items() if r or not name.startswith("ceiling")}
    summary: LocomoSummary = {
        "metrics": metrics,
        "failed_calls_not_scored": len(answers) - len(scored),
        "answer_failures": sum(1 for p in answers if p.failure),
        "judge": {
            "judged": len(verdicts),
            "parse_failures": sum(1 for v in verdicts if v.failed(PARSE_FAILURE)),
            "call_failures": sum(1 for v in verdicts if v.failed(CALL_FAILURE)),
        },
        "errata_items": sum(1 for p in answers if "erratum" in p.meta),
        "aggregation": (
            "value = mean over the questions scored (f1: all categories, LoCoMo's rule per "
            "category; j, b1, f1_mem0: categories 1-4; recall: questions with evidence); subsets = per "
            "category and answerable (1-4); intervals resample the conversations"
        ),
    }
    if (block := _errata_block(answers, metrics)) is not None:
        summary["errata"] = block
    if (latency := latency_summary(predictions)) is not None:
        summary["latency"] = latency
    return scores, summary


def _errata_block(answers: list[Prediction], metrics: dict[str, Any]) -> dict[str, Any] | None:
    block = errata_summary(answers)
    if block is None:
        return None
    counts = Counter(j for p in answers for j in release_key_judges(p))
    for judge, n in counts.items():
        note = (
            f"{n} verdicts judged against the release's answer, which the errata corrected: "
            "not re-judged (offline judges cannot re-judge an imported verdict); the clean "
            "subset has none"
        )
        for name, entry in metrics.items():
            if name == judge or (judge != "j" and name.startswith(f"{judge}_")):
                entry["key"] = note
    return block
