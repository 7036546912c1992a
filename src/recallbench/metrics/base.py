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
from typing import TYPE_CHECKING

from recallbench.verdict import JSONValue

if TYPE_CHECKING:
    import numpy as np

    from recallbench.metrics.bootstrap import ClusterStatistic

Reference = str | Sequence[str]  # one reference, or several (scored against the best one)


@dataclass(frozen=True)
class MetricResult:
    """A corpus-level value, per-item values when the metric defines them, and provenance.

    Attributes:
        value: the corpus-level score.
        items: one value per (prediction, reference) pair, or None for corpus-only metrics
            (Distinct-n, MAUVE).
        meta: what produced the value (implementation, model, layer, tokenization, n ...).
        stats: per-item additive sufficient statistics (items x d) whose column sums give
            ``value`` through ``estimator`` (``metrics.estimators``); None when the value is
            the plain mean of ``items`` or not additive. Not serialized by ``to_dict``.
        estimator: the estimator spec of ``stats`` (``{"fn": "bleu", "max_order": 4}``).
    """

    value: float
    items: list[float] | None = None
    meta: dict[str, JSONValue] = field(default_factory=dict)
    stats: np.ndarray | list[list[float]] | None = field(default=None, repr=False, compare=False)
    estimator: dict[str, str | int | float | None] | None = None

    def __post_init__(self) -> None:
        if not math.isfinite(self.value):
            raise ValueError(f"metric value must be finite, got {self.value}")
        if self.items is not None and not all(math.isfinite(v) for v in self.items):
            raise ValueError("metric items must be finite")

    def to_dict(self) -> dict[str, JSONValue]:
        """Return a JSON-ready dict."""
        items: JSONValue = None if self.items is None else list(self.items)
        return {"value": self.value, "items": items, "meta": dict(self.meta)}


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
    bootstrap_note: str = ""  # how the metric's interval departs from a plain episode resample
    bootstrap_resamples: int | None = None  # a cheaper number of resamples (expensive metrics)
    bootstrap_serializable: bool = True  # per-episode statistics small enough for summary.json
    uses_contexts: bool = False  # ``compute`` takes ``contexts=`` (the stored prompt per item)
    # Expensive metrics keep their results in ``metrics.cache`` by what decides them: their
    # settings, the source of their code (the class's modules, the modules it imports names
    # from and ``cache_modules``, e.g. ones it imports inside a function), ``cache_packages``
    # by version, and ``cache_version`` (raise it to drop results for a reason the code's
    # source does not show, e.g. a data file).
    cache_results: bool = False
    cache_version: str = "1"
    cache_packages: tuple[str, ...] = ()
    cache_modules: tuple[str, ...] = ()

    @abstractmethod
    def compute(self, predictions: Sequence[str], references: Sequence[Reference]) -> MetricResult:
        """Score ``predictions`` against ``references`` (same length, aligned by position)."""

    def clustered(
        self,
        result: MetricResult,
        predictions: Sequence[str],
        references: Sequence[Reference],
        clusters: Sequence[str],
    ) -> ClusterStatistic | None:
        """Return ``result.value`` as a function of the episodes (``clusters``, one per item).

        The default sums ``result.stats`` (else ``[item, 1]``: a mean) per episode; metrics
        whose value is not additive override this. None: no interval (e.g. nothing scored).
        """
        from recallbench.metrics.bootstrap import Additive

        note, resamples = self.bootstrap_note, self.bootstrap_resamples
        if not clusters:
            return None
        if result.stats is not None and result.estimator is not None:
            return Additive.from_items(
                clusters, result.stats, result.estimator, note=note, resamples=resamples
            )
        if result.items is not None:
            stats = [[v, 1.0] for v in result.items]
            return Additive.from_items(
                clusters, stats, {"fn": "ratio"}, note=note, resamples=resamples
            )
        return None

    def cache_settings(self) -> dict[str, JSONValue] | None:
        """The settings that decide this metric's results: its public attributes (plain
        values). None: not cached (``cache_results`` off, or a setting is an object)."""
        if not self.cache_results:
            return None
        settings = {k: v for k, v in vars(self).items() if not k.startswith("_")}
        return settings if all(_plain(v) for v in settings.values()) else None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def _plain(value: object) -> bool:
    """Whether ``value`` is JSON data (what a cache key can name)."""
    if value is None or isinstance(value, bool | int | float | str):
        return True
    if isinstance(value, list | tuple):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


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
