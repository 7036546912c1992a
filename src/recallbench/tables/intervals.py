"""A cell's interval and per-episode statistics, read from run summaries or recomputed when pooled.

Where a summary entry keeps the interval of the number a column reads (``metrics.bootstrap``
writes them, one per reported value):

| column reads | value | interval | per-episode statistics |
|---|---|---|---|
| ``value`` (default) | ``value`` | ``ci95`` | ``bootstrap`` |
| ``value: session_mean`` | ``session_mean`` | ``session_mean_ci95`` | ``per_session[*].bootstrap`` (mean over sessions) |
| ``session: s`` | ``per_session[s].value`` | ``per_session[s].ci95`` | ``per_session[s].bootstrap`` |
| ``qsession: "s/q"`` | ``per_question_session[...]`` | its ``ci95`` | none stored |

A cell of one run takes the run's own interval. A cell that pools several runs (THEANINE's
"Avg." of MSC and CC, Table 9's sessions of both datasets) is their n-weighted mean; its interval
is recomputed by a stratified episode bootstrap: each run's episodes are resampled on their own
(``scipy.stats.bootstrap`` with one sample per run), the run's value recomputed from its stored
per-episode statistics, and the resampled values pooled with the cell's fixed weights. Without
stored statistics for every run (MAUVE, Distinct-n: see their modules) a pooled cell has no
interval and :func:`pooled_interval` says why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from recallbench.metrics.bootstrap import Bootstrap, ClusterStatistic, MeanOf, statistic_from_entry
from recallbench.tables.entry import Entry

__all__ = [
    "Found",
    "Stratified",
    "entry_found",
    "pooled_interval",
    "pooled_seeds",
    "stratified_values",
]


@dataclass(frozen=True)
class Found:
    """One run's number for a cell: value, items, interval, episodes and statistics."""

    value: float
    n: int
    ci: tuple[float, float] | None = None
    episodes: int | None = None
    stat: ClusterStatistic | None = None
    stratum: str = ""  # the run's dataset: pooled cells pair runs of the same dataset
    why: str = ""  # why there is no interval / statistic (the summary's ci_note)
    seeds: tuple[float, ...] | None = None  # each seed's value of a seed-averaged metric (MAUVE)


def _seeds(value: Any) -> tuple[float, ...] | None:
    return None if not value else tuple(float(v) for v in value)


def _ci(value: Any) -> tuple[float, float] | None:
    return None if value is None else (float(value[0]), float(value[1]))


def _session_mean_stat(entry: Mapping[str, Any]) -> ClusterStatistic | None:
    parts = [statistic_from_entry(s) for s in (entry.get("per_session") or {}).values()]
    if not parts or any(p is None for p in parts):
        return None
    return MeanOf.of(parts)  # type: ignore[arg-type]


def entry_found(
    entry: Mapping[str, Any], column: Entry, field: str, stratum: str = ""
) -> Found | None:
    """Return what a column reads from one metric's summary entry (None: absent)."""
    if column.subset is not None:  # a subset of the items (CareCall's memory turns)
        subset = (entry.get("subsets") or {}).get(column.subset)
        if subset is None:
            return None
        entry = subset
    why = str(entry.get("ci_note") or "")
    places = (("per_session", column.session), ("per_question_session", column.qsession))
    for part, key in places:
        if key is not None:
            sub = (entry.get(part) or {}).get(str(key))
            if sub is None:
                return None
            return Found(
                float(sub["value"]),
                int(sub["n"]),
                _ci(sub.get("ci95")),
                sub.get("n_clusters"),
                statistic_from_entry(sub),
                stratum,
                str(sub.get("ci_note") or why),
                _seeds(sub.get("seed_values")),
            )
    field = field if column.value is None else column.value
    if field not in entry:
        return None
    n = int(entry.get("n", 0))
    episodes = entry.get("n_clusters")
    stat: ClusterStatistic | None
    seeds = _seeds(entry.get("seed_values" if field == "value" else f"{field}_seed_values"))
    if field == "value":
        ci, stat = _ci(entry.get("ci95")), statistic_from_entry(entry)
    elif field == "session_mean":
        ci, stat = _ci(entry.get("session_mean_ci95")), _session_mean_stat(entry)
    else:
        ci, stat = _ci(entry.get(f"{field}_ci95")), None
        why = why or f"the summary keeps no interval of {field!r}"
    return Found(float(entry[field]), n, ci, episodes, stat, stratum, why, seeds)


@dataclass(frozen=True)
class Stratified:
    """``constant + sum w * stat(positions)`` over the resampled strata (a scipy statistic)."""

    constant: float
    free: tuple[tuple[float, ClusterStatistic], ...]

    @property
    def vectorized(self) -> bool:
        return all(s.vectorized for _, s in self.free)

    def __call__(self, *idx: np.ndarray, axis: int = -1) -> np.ndarray | float:
        return self.constant + sum(
            w * s.values(i) for (w, s), i in zip(self.free, idx, strict=True)
        )


def stratified_values(
    parts: Sequence[tuple[float, ClusterStatistic]],
) -> tuple[list[np.ndarray], Stratified]:
    """The samples and statistic of a stratified bootstrap of ``sum w * stat`` (fixed weights).

    A stratum with a single episode cannot be resampled (scipy needs two observations): its
    value enters as a constant.
    """
    constant = sum(w * s.value() for w, s in parts if len(s.ids) < 2)
    free = tuple((w, s) for w, s in parts if len(s.ids) >= 2)
    return [np.arange(len(s.ids)) for _, s in free], Stratified(constant, free)


def pooled_interval(
    found: Sequence[Found], settings: Bootstrap | None = None
) -> tuple[tuple[float, float] | None, str]:
    """Return the stratified-bootstrap interval of the n-weighted mean of ``found`` (or why not)."""
    from scipy import stats as st

    settings = settings or Bootstrap()
    weighted = [f for f in found if f.n > 0]
    if len(weighted) == 1:
        return weighted[0].ci, weighted[0].why
    missing = [f for f in weighted if f.stat is None]
    if missing:
        why = "; ".join(dict.fromkeys(f.why for f in missing if f.why))
        return None, f"pooled over {len(weighted)} runs, no per-episode statistics ({why})"
    total = sum(f.n for f in weighted)
    parts = [(f.n / total, f.stat) for f in weighted]
    samples, statistic = stratified_values(parts)  # type: ignore[arg-type]
    if not samples:
        return None, "pooled runs of one episode each: no interval"
    res = st.bootstrap(
        tuple(samples),
        statistic,
        n_resamples=settings.n_resamples,
        confidence_level=settings.confidence,
        method=settings.method,
        vectorized=statistic.vectorized,
        rng=np.random.default_rng(settings.seed),
    )
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if not (np.isfinite(low) and np.isfinite(high)):
        return None, "pooled interval degenerate"
    return (low, high), ""


def pooled_seeds(found: Sequence[Found]) -> tuple[float, ...] | None:
    """Each seed's value of the n-weighted mean of ``found`` (None unless every run has the same
    number of seeds): seed k of the pool is the weighted mean of the runs' seed-k values, with
    the weights of the pooled value itself."""
    weighted = [f for f in found if f.n > 0]
    counts = {len(f.seeds) if f.seeds else 0 for f in weighted}
    if not weighted or len(counts) != 1 or 0 in counts:
        return None
    total = sum(f.n for f in weighted)
    by_seed = zip(*(f.seeds or () for f in weighted), strict=True)
    return tuple(
        sum(v * f.n for v, f in zip(values, weighted, strict=True)) / total for values in by_seed
    )
