"""Episode-clustered intervals of LUFY's memory tables (Tables 12, 14, 15): users resampled.

A LUFY episode is one user's conversation with one system; the memory tables pool records
(an episode's session) or questions over episodes, so the bootstrap resamples episodes
(``metrics.bootstrap``): Table 15's top-k ratios are means of per-question indicators
(additive, exact); Tables 12/14's agreements are means over annotators of pooled shares,
recomputed from the resampled episodes' records (``Generic``), and ``Avg.`` is the mean of the
sessions' statistics over the same resampled episodes (``MeanOf``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypedDict, TypeVar

import numpy as np

from recallbench.metrics.bootstrap import Additive, Generic, MeanOf, cluster_ci
from recallbench.metrics.clusters import ClusterStatistic

__all__ = ["IntervalFields", "agreement_statistic", "interval_fields", "ratio_statistic"]

R = TypeVar("R")  # one record of an episode


def ratio_statistic(episodes: Sequence[str], hits: Sequence[float]) -> Additive | None:
    """The mean of per-item ``hits`` as an additive statistic clustered by ``episodes``."""
    if not hits:
        return None
    return Additive.from_items(list(episodes), [[h, 1.0] for h in hits], {"fn": "ratio"})


def agreement_statistic(
    episodes: Sequence[str], records: Sequence[R], fn: Callable[[Sequence[R]], float]
) -> Generic | None:
    """``fn`` of the records of the resampled episodes (one or more records per episode)."""
    if not records:
        return None
    ids = list(dict.fromkeys(episodes))
    by_episode: dict[str, list[R]] = {e: [] for e in ids}
    for episode, record in zip(episodes, records, strict=True):
        by_episode[episode].append(record)
    groups = [by_episode[e] for e in ids]

    def value(positions: np.ndarray) -> float:
        return fn([r for p in positions for r in groups[int(p)]])

    return Generic(tuple(ids), value)


def mean_statistic(parts: Sequence[ClusterStatistic | None]) -> ClusterStatistic | None:
    """The mean over sessions of their statistics (None when a session has none)."""
    if not parts or any(p is None for p in parts):
        return None
    return MeanOf.of(parts)  # type: ignore[arg-type]


class IntervalFields(TypedDict, total=False):
    """The ``Cell`` fields of a statistic's interval (and a builder's ``comparable``)."""

    ci_low: float
    ci_high: float
    episodes: int
    comparable: bool


def interval_fields(stat: ClusterStatistic | None, scale: float = 1.0) -> IntervalFields:
    """Cell fields ``ci_low``, ``ci_high``, ``episodes`` of a statistic (empty without one)."""
    if stat is None:
        return {}
    interval = cluster_ci(stat)
    if interval.low is None or interval.high is None:
        return {"episodes": interval.n_clusters}
    return {
        "ci_low": interval.low * scale,
        "ci_high": interval.high * scale,
        "episodes": interval.n_clusters,
    }
