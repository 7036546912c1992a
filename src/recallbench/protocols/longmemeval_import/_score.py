"""The summary of an imported LongMemEval run: the run's judge, the shipped labels, agreement.

- ``accuracy``: the run judge's yes share (``meta["judge"]``) over the imported answers, with
  ``subsets`` per question type, ``abstention`` and, under errata, ``clean``;
  ``task_averaged``: the mean of the per-type accuracies (a type without questions left out).
- ``accuracy_autoeval``, ``task_averaged_autoeval``: the same of the shipped ``autoeval_label``
  (``meta["judges"]["autoeval"]``), only for a judged file.
- ``agree_j``, ``kappa_j``: the run's judge against the shipped label, per question.

Every LongMemEval question is its own history (its own episode), so the intervals resample
questions (``clustered_entry`` over one row per question). ``task_averaged`` is reported with
its value and count and without an interval (a mean of per-type means; its resampling needs
the per-type estimator of the ``longmemeval_qa`` protocol).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from recallbench.judges.longmemeval import QUESTION_TYPES
from recallbench.metrics.bootstrap import clustered_entry
from recallbench.metrics.summary import Summary
from recallbench.payloads import answer_meta
from recallbench.protocols.locomo_import import agreement_entries
from recallbench.records import Prediction, Score
from recallbench.verdict import verdict_of

SOURCE = "autoeval"  # the authors' field name: metrics accuracy_autoeval, task_averaged_autoeval
METRICS = (
    "accuracy",
    "task_averaged",
    f"accuracy_{SOURCE}",
    f"task_averaged_{SOURCE}",
    "agree_j",
    "kappa_j",
)
Row = tuple[str, int, list[float]]


def _entry(rows: list[tuple[Row, list[str]]]) -> dict[str, Any]:
    entry = clustered_entry([r for r, _ in rows], per_session=False)
    subsets = sorted({s for _, subs in rows for s in subs})
    entry["subsets"] = {
        s: clustered_entry([r for r, subs in rows if s in subs], per_session=False) for s in subsets
    }
    return entry


def _task_averaged(entry: dict[str, Any]) -> dict[str, Any]:
    """The mean of the per-type accuracies of an ``accuracy`` entry (types present only)."""
    per_type = [entry["subsets"][t] for t in QUESTION_TYPES if t in entry["subsets"]]
    value = sum(e["value"] for e in per_type) / len(per_type) if per_type else 0.0
    return {"value": value, "n": entry["n"], "types": len(per_type)}


def _value(p: Prediction, metric: str) -> float | None:
    if metric == "accuracy":
        verdict = verdict_of(p)
        return None if verdict is None else float(verdict.correct)
    shipped = answer_meta(p).get("judges", {}).get(SOURCE)
    return None if shipped is None else float(shipped)


def score_import(predictions: Sequence[Prediction]) -> tuple[list[Score], Summary]:
    """Per-answer scores and the run summary of a ``longmemeval_import`` run."""
    answers = [p for p in predictions if p.kind == "answer"]
    scores: list[Score] = []
    metrics: dict[str, Any] = {}
    for name in ("accuracy", f"accuracy_{SOURCE}"):
        rows: list[tuple[Row, list[str]]] = []
        for p in answers:
            value = _value(p, name)
            if value is None:
                continue
            scores.append(Score(p.pred_id, name, value))
            subsets = list(answer_meta(p).get("subsets", []))
            rows.append(((p.episode_id, p.session_index, [value, 1.0]), subsets))
        if rows:
            metrics[name] = _entry(rows)
            metrics[name.replace("accuracy", "task_averaged")] = _task_averaged(metrics[name])
    metrics.update(agreement_entries(answers, SOURCE, judges=("j",)))
    verdicts = [v for v in map(verdict_of, answers) if v is not None]
    summary: Summary = {
        "metrics": metrics,
        "judge": {
            "judged": len(verdicts),
            "exact_replies": sum(1 for v in verdicts if v.info.get("reply_exact") is True),
        },
        "aggregation": (
            "accuracy: the judge's yes share over the imported answers, subsets per question "
            "type, abstention and (under errata) clean; task_averaged: the mean of the per-type "
            "accuracies; _autoeval: the shipped labels; agree_j/kappa_j: the run's judge against "
            "the shipped label; intervals resample questions (each its own history)"
        ),
    }
    return scores, summary
