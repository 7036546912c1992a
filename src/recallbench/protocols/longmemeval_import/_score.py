"""The summary of an imported LongMemEval run: the run's judge, the shipped labels, agreement.

- ``accuracy``: the run judge's yes share (``meta["judge"]``) over the imported answers, with
  ``subsets`` per question type, ``abstention`` and, under errata, ``clean``;
  ``task_averaged``: the mean of the per-type accuracies (a type without questions left out).
- ``accuracy_autoeval``, ``task_averaged_autoeval``: the same of the shipped ``autoeval_label``
  (``meta["judges"]["autoeval"]``), only for a judged file.
- ``agree_j``, ``kappa_j``: the run's judge against the shipped label, per question.

Both are ``longmemeval_qa``'s own scoring (``protocols.longmemeval.score_longmemeval``: the
authors' ``print_qa_metrics.py``), run once on the run judge's verdicts and once on the shipped
labels written as verdicts (judge ``autoeval``, the label's model), so an imported run and a run
of ours are scored by one function. Every question is its own history, so the intervals
resample questions (``task_averaged`` with the per-type estimator ``ratio_groups``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from recallbench.payloads import answer_meta
from recallbench.protocols.locomo_import import agreement_entries
from recallbench.protocols.longmemeval import LongMemEvalSummary, score_longmemeval
from recallbench.records import Prediction, Score
from recallbench.verdict import CORRECT, INCORRECT, JSONValue, Verdict, verdict_of

SOURCE = "autoeval"  # the authors' field name: metrics accuracy_autoeval, task_averaged_autoeval
METRICS = (
    "accuracy",
    "task_averaged",
    f"accuracy_{SOURCE}",
    f"task_averaged_{SOURCE}",
    "agree_j",
    "kappa_j",
)
QA = ("accuracy", "task_averaged")


def shipped_as_verdict(p: Prediction) -> Prediction | None:
    """``p`` with its shipped label as the verdict (``meta["judge"]``); None when unlabelled."""
    meta = answer_meta(p)
    label = meta.get("judges", {}).get(SOURCE)
    if label is None:
        return None
    model = meta.get("imported", {}).get("label_model")
    verdict = Verdict(
        CORRECT if label else INCORRECT,
        raw=str(bool(label)),
        judge=SOURCE,
        model=model if isinstance(model, str) else None,
    )
    return dataclasses.replace(p, meta={**p.meta, "judge": verdict.to_dict()})


class LongMemEvalImportSummary(LongMemEvalSummary, total=False):
    """A ``longmemeval_import`` run's summary: ``longmemeval_qa``'s, the shipped labels' source
    and the errata applied."""

    imported: dict[str, JSONValue]  # the shipped judge's metric, label models, the paper's judge
    errata: dict[str, JSONValue]  # under errata: the entries and the clean subset's size


def score_import(predictions: Sequence[Prediction]) -> tuple[list[Score], LongMemEvalImportSummary]:
    """Per-answer scores and the run summary of a ``longmemeval_import`` run."""
    answers = [p for p in predictions if p.kind == "answer"]
    ours_scores, ours = score_longmemeval(answers)
    scores = [s for s in ours_scores if s.metric == "accuracy"]
    metrics: dict[str, Any] = {k: v for k, v in ours["metrics"].items() if k in QA}
    shipped = [q for q in map(shipped_as_verdict, answers) if q is not None]
    if shipped:
        theirs_scores, theirs = score_longmemeval(shipped)
        scores += [
            Score(s.pred_id, f"accuracy_{SOURCE}", s.value)
            for s in theirs_scores
            if s.metric == "accuracy"
        ]
        metrics.update({f"{k}_{SOURCE}": theirs["metrics"][k] for k in QA})
    metrics.update(agreement_entries(answers, SOURCE, judges=("j",)))
    verdicts = [v for v in map(verdict_of, answers) if v is not None]
    summary: LongMemEvalImportSummary = {
        "metrics": metrics,
        "judge": {
            "judged": len(verdicts),
            "exact_replies": sum(1 for v in verdicts if v.info.get("reply_exact") is True),
        },
        "aggregation": (
            "accuracy: the judge's yes share over the imported answers, subsets per question "
            "type, abstention and (under errata) clean; task_averaged: the mean of the per-type "
            "accuracies (longmemeval_qa's scoring); _autoeval: the shipped labels; "
            "agree_j/kappa_j: the run's judge against the shipped label; intervals resample "
            "questions (each its own history)"
        ),
    }
    return scores, summary
