"""Metric contract: ``compute(predictions, references) -> MetricResult``.

Every metric is total: empty input or an empty prediction scores 0, never NaN, so results are
always JSON-safe (``json.dumps(..., allow_nan=False)``). Values are on a 0-1 scale unless the
metric says otherwise (perplexity); papers that print x100 (THEANINE) are rescaled by the tables.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

Reference = str | Sequence[str]  # one reference, or several (scored against the best one)


@dataclass(frozen=True)
class MetricResult:
    """A corpus-level value, per-item values when the metric defines them, and provenance.

    Attributes:
        value: the corpus-level score.
        items: one value per (prediction, reference) pair, or None for corpus-only metrics
            (Distinct-n, MAUVE).
        meta: what produced the value (implementation, model, layer, tokenization, n ...).
    """

    value: float
    items: list[float] | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not math.isfinite(self.value):
            raise ValueError(f"metric value must be finite, got {self.value}")
        if self.items is not None and not all(math.isfinite(v) for v in self.items):
            raise ValueError("metric items must be finite")

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return {"value": self.value, "items": self.items, "meta": dict(self.meta)}


class Metric(ABC):
    """A parameter-free (after construction) response metric.

    Class attributes document the metric for users and for the contract test:
        name: registry key.
        higher_is_better: direction.
        bounds: (low, high) of value and items.
        identical_is_max: whether predictions == references gives ``bounds[1]``.
        description: inputs, range, implementation details.
    """

    name: str = "metric"
    higher_is_better: bool = True
    bounds: tuple[float, float] = (0.0, 1.0)
    identical_is_max: bool = True
    description: str = ""

    @abstractmethod
    def compute(self, predictions: Sequence[str], references: Sequence[Reference]) -> MetricResult:
        """Score ``predictions`` against ``references`` (same length, aligned by position)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def check_inputs(
    name: str, predictions: Sequence[str], references: Sequence[Reference]
) -> tuple[list[str], list[list[str]]]:
    """Validate aligned inputs; return predictions and references as lists of reference lists."""
    if isinstance(predictions, str) or isinstance(references, str):
        raise TypeError(f"{name}: predictions and references must be lists of strings, not str")
    if len(predictions) != len(references):
        raise ValueError(
            f"{name}: {len(predictions)} predictions but {len(references)} references "
            "(they must be aligned one to one)"
        )
    preds = list(predictions)
    for i, p in enumerate(preds):
        if not isinstance(p, str):
            raise TypeError(f"{name}: prediction {i} is {type(p).__name__}, expected str")
    refs: list[list[str]] = []
    for i, r in enumerate(references):
        rs = [r] if isinstance(r, str) else list(r) if isinstance(r, list | tuple) else []
        if not rs or not all(isinstance(x, str) for x in rs):
            raise TypeError(
                f"{name}: reference {i} must be a str or a non-empty list of str, got {r!r:.80}"
            )
        refs.append(rs)
    return preds, refs


def mean(values: Sequence[float]) -> float:
    """Arithmetic mean; 0.0 for no values (metrics are total)."""
    return float(sum(values) / len(values)) if values else 0.0
