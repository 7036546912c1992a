"""A new metric: exact match after lower-casing and collapsing white space.

In the project: ``src/recallbench/metrics/exact_match.py`` and one entry in ``metrics.METRICS``
(``"exact_match": ExactMatch()``); ``tests/metrics`` runs its contract over every entry.
"""

from __future__ import annotations

from collections.abc import Sequence

from recallbench.metrics.base import Metric, MetricResult, Reference


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


class ExactMatch(Metric):
    name = "exact_match"
    description = "1 when the prediction equals a reference (case and spacing ignored); mean"

    def compute(self, predictions: Sequence[str], references: Sequence[Reference]) -> MetricResult:
        if len(predictions) != len(references):
            raise ValueError(f"{len(predictions)} predictions but {len(references)} references")
        items = []
        for pred, ref in zip(predictions, references, strict=True):
            refs = [ref] if isinstance(ref, str) else list(ref)
            items.append(float(any(_norm(pred) == _norm(r) for r in refs)))
        value = sum(items) / len(items) if items else 0.0
        return MetricResult(value, items, {"implementation": "recallbench exact_match"})
