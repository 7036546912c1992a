"""Episode-clustered bootstrap CIs, paired tests between runs, Holm's correction.

Why clustered: turns and questions are not independent. A THEANINE episode contributes ~36
responses from one pair of speakers, LUFY asks the same questions again after every session, and
CAIM's 100 questions come from 15 users. An interval that resamples items as if they were
independent is too narrow (and a t-interval over sentence BLEU does not even bracket corpus
BLEU). Here the unit of resampling is the episode: every resample draws episodes with
replacement and recomputes the reported value from them, corpus metrics included.

How: a :class:`ClusterStatistic` (``metrics.clusters``) maps resampled episode positions to the
value. For values that are functions of additive sufficient statistics (:class:`Additive`, see
``metrics.estimators``) each episode's statistics are summed once and a resample is a sum of
rows, so 2,000 resamples cost milliseconds. Other values (an ICC) recompute from the resampled
episodes (:class:`Generic`). Values the bootstrap would misstate get no interval and say why
(Distinct-n and MAUVE: see their modules). Intervals come from
``scipy.stats.bootstrap`` over the vector of episode positions (percentile method by default;
``vectorized`` for additive statistics); the paired test is ``scipy.stats.permutation_test`` with
``permutation_type="samples"``: under H0 the two runs are exchangeable within each episode, so
each permutation swaps the two runs' statistics episode by episode (exact when 2^n_clusters <=
n_resamples). Holm's step-down correction is hand-written (scipy only ships FDR control).

Percentile intervals undercover with few clusters (e.g. 15 GVD users, fixture runs with 2-3
episodes); ``n_clusters`` is recorded beside every interval so a reader can judge. With fewer
than 2 clusters no interval exists: ``ci95`` is None.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from recallbench.metrics.clusters import (
    Additive,
    ClusterStatistic,
    Generic,
    MeanOf,
    pooled,
    rekeyed,
)
from recallbench.metrics.estimators import Spec
from recallbench.records import JSON
from recallbench.verdict import JSONValue

__all__ = [
    "RATIO",
    "Additive",
    "Bootstrap",
    "ClusterStatistic",
    "clustered_entry",
    "Generic",
    "Interval",
    "MeanOf",
    "PairedTest",
    "ci_fields",
    "cluster_ci",
    "compare_to_reference",
    "holm",
    "paired_test",
    "rekeyed",
    "statistic_from_entry",
]

METHOD = "episode-clustered bootstrap, {method} interval (scipy.stats.bootstrap)"


@dataclass(frozen=True)
class Bootstrap:
    """Resampling settings, recorded beside every interval they produce."""

    n_resamples: int = 2000
    seed: int = 0
    confidence: float = 0.95
    method: Literal["percentile", "basic", "BCa"] = "percentile"

    @property
    def key(self) -> str:
        """Summary field of the interval: ``ci95`` for 95%."""
        return f"ci{round(self.confidence * 100):d}"


@dataclass(frozen=True)
class Interval:
    """A point estimate, its clustered-bootstrap interval (None: < 2 clusters) and settings."""

    value: float
    low: float | None
    high: float | None
    n_clusters: int
    settings: Bootstrap
    n_resamples: int
    note: str = ""

    def fields(self) -> dict[str, JSON]:
        """Summary fields: ``ci95``, ``ci_method``, ``n_resamples``, ``seed``, ``n_clusters``."""
        ci = None if self.low is None else [self.low, self.high]
        method = METHOD.format(method=self.settings.method)
        out: dict[str, JSON] = {
            self.settings.key: ci,
            "ci_method": f"{method}; {self.note}" if self.note else method,
            "n_resamples": self.n_resamples,
            "seed": self.settings.seed,
            "n_clusters": self.n_clusters,
        }
        if ci is None:
            out["ci_note"] = f"no interval from {self.n_clusters} cluster(s)"
        return out


def _rng(settings: Bootstrap) -> np.random.Generator:
    return np.random.default_rng(settings.seed)


def cluster_ci(stat: ClusterStatistic, settings: Bootstrap = Bootstrap()) -> Interval:
    """Return the value of ``stat`` with its episode-clustered bootstrap interval."""
    from scipy import stats as st

    n = len(stat.ids)
    value = stat.value() if n else 0.0
    resamples = min(settings.n_resamples, stat.resamples or settings.n_resamples)
    if n < 2:
        return Interval(value, None, None, n, settings, 0, stat.note)
    res = st.bootstrap(
        (np.arange(n),),
        lambda idx, axis=-1: stat.values(idx),
        n_resamples=resamples,
        confidence_level=settings.confidence,
        method=settings.method,
        vectorized=stat.vectorized,
        batch=max(1, min(resamples, 2_000_000 // max(n, 1) // 64)),
        rng=_rng(settings),
    )
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if not (np.isfinite(low) and np.isfinite(high)):  # BCa on a degenerate distribution
        low = high = value
    return Interval(value, low, high, n, settings, resamples, stat.note)


@dataclass(frozen=True)
class PairedTest:
    """A minus B on their shared episodes: difference, paired-bootstrap CI, permutation p."""

    diff: float
    low: float | None
    high: float | None
    p_value: float
    n_clusters: int
    test: str

    def to_dict(self) -> dict[str, JSON]:
        """Return a JSON-ready dict."""
        return {
            "diff": self.diff,
            "ci": None if self.low is None else [self.low, self.high],
            "p_value": self.p_value,
            "n_clusters": self.n_clusters,
            "test": self.test,
        }


def paired_test(
    a: ClusterStatistic,
    b: ClusterStatistic,
    settings: Bootstrap = Bootstrap(),
    key: Callable[[str], str] | None = None,
) -> PairedTest:
    """Compare two runs on the episodes both have (pairing by episode id, or by ``key(id)``).

    p-value: a permutation test that swaps the runs within episodes when both statistics share
    one additive estimator (or a mean over sessions of such); otherwise the paired bootstrap's
    two-sided p, 2 (k + 1) / (B + 1) with k the resampled differences on the smaller side of 0.
    The CI of the difference is the paired bootstrap's (the same episodes resampled for both).
    """
    from scipy import stats as st

    if key is not None:
        a, b = rekeyed(a, key), rekeyed(b, key)
    shared = [c for c in a.ids if c in set(b.ids)]
    n = len(shared)
    if n == 0:
        raise ValueError("paired_test: the two runs share no episode")
    a, b = a.aligned(shared), b.aligned(shared)
    diff = a.value() - b.value()
    if n < 2:
        return PairedTest(diff, None, None, 1.0, n, "none (fewer than 2 shared episodes)")
    vectorized = a.vectorized and b.vectorized
    boot = st.bootstrap(
        (np.arange(n),),
        lambda idx, axis=-1: a.values(idx) - b.values(idx),
        n_resamples=settings.n_resamples,
        confidence_level=settings.confidence,
        method=settings.method,
        vectorized=vectorized,
        rng=_rng(settings),
    )
    low, high = float(boot.confidence_interval.low), float(boot.confidence_interval.high)
    pooled_stat = pooled(a, b)
    if pooled_stat is not None:
        perm = st.permutation_test(
            (np.arange(n), np.arange(n, 2 * n)),
            lambda x, y, axis=-1: pooled_stat.values(x) - pooled_stat.values(y),
            permutation_type="samples",
            vectorized=pooled_stat.vectorized,
            n_resamples=settings.n_resamples,
            alternative="two-sided",
            rng=_rng(settings),
        )
        test = "paired permutation by episode (scipy.stats.permutation_test)"
        return PairedTest(diff, low, high, float(min(1.0, perm.pvalue)), n, test)
    # Two-sided bootstrap p, counted like a permutation p so that it is never 0.
    dist = np.asarray(boot.bootstrap_distribution)
    tail = min(int(np.sum(dist <= 0)), int(np.sum(dist >= 0)))
    p = min(1.0, 2 * (tail + 1) / (dist.size + 1))
    return PairedTest(diff, low, high, p, n, "paired bootstrap by episode")


def compare_to_reference(
    stats: Mapping[str, ClusterStatistic],
    reference: str,
    settings: Bootstrap = Bootstrap(),
    key: Callable[[str], str] | None = None,
    alpha: float = 0.05,
) -> dict[str, dict[str, JSONValue]]:
    """Paired tests of every row against the ``reference`` row, Holm-corrected together.

    Returns ``{row: {diff, ci, p_value, p_holm, significant, n_clusters, test}}`` for every row
    but the reference; ``significant`` is ``p_holm <= alpha``.
    """
    if reference not in stats:
        raise KeyError(f"reference row {reference!r} not among {sorted(stats)}")
    rows = [r for r in stats if r != reference]
    tests = {r: paired_test(stats[r], stats[reference], settings, key) for r in rows}
    adjusted = holm([t.p_value for t in tests.values()])
    return {
        r: {**t.to_dict(), "p_holm": p, "significant": p <= alpha}
        for (r, t), p in zip(tests.items(), adjusted, strict=True)
    }


def holm(p_values: Sequence[float]) -> list[float]:
    """Return Holm (1979) step-down adjusted p-values, in the input order.

    Sorted ascending, p_(i) is multiplied by (m - i) (i from 0), made non-decreasing along the
    order and capped at 1; reject H_i at level alpha iff its adjusted p <= alpha.
    """
    p = np.asarray(p_values, dtype=float)
    m = p.size
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    out = np.empty(m)
    out[order] = adjusted
    return [float(v) for v in out]


def ci_fields(
    stat: ClusterStatistic | None,
    settings: Bootstrap = Bootstrap(),
    *,
    reason: str = "no interval: nothing was scored",
    full: bool = True,
    keep: bool = True,
) -> dict[str, JSON]:  # Any: callers merge it into entries they type as dict[str, float]
    """Return the summary fields of a value's interval.

    ``full``: also ``ci_method``, ``n_resamples`` and ``seed`` (per-session entries record only
    ``ci95`` and ``n_clusters``; the metric's entry has the settings). ``keep``: store an
    additive statistic's per-episode sums under ``bootstrap`` so tables can run paired tests.
    ``reason`` explains a missing interval when ``stat`` is None.
    """
    if stat is None:
        return {settings.key: None, "ci_note": reason}
    interval = cluster_ci(stat, settings)
    fields = interval.fields()
    if not full:
        fields = {k: v for k, v in fields.items() if k in (settings.key, "n_clusters", "ci_note")}
    if keep and isinstance(stat, Additive):
        fields["bootstrap"] = stat.to_dict()
    return fields


def statistic_from_entry(entry: Mapping[str, JSONValue]) -> Additive | None:
    """Rebuild the additive statistic a summary entry stored under ``bootstrap`` (or None)."""
    data = entry.get("bootstrap")
    if not data:
        return None
    if not isinstance(data, dict):
        raise TypeError(f"a summary entry's 'bootstrap' is an object, got {data!r:.80}")
    return Additive.from_dict(data)


RATIO: Spec = {"fn": "ratio"}


def clustered_entry(
    rows: Sequence[tuple[str, int, Sequence[float]]],
    spec: Spec = RATIO,
    per_session: bool = True,
) -> dict[str, JSONValue]:
    """A summary entry from (cluster, session, statistics) rows: value, n, interval, per session.

    The value is the estimator ``spec`` of the summed statistics (``ratio`` over ``[x, 1]`` rows:
    the mean of x); the interval resamples clusters (``ci_fields``). With ``per_session``, the
    same per session index under ``per_session`` (interval without the settings). No rows: value
    0 and no interval. Protocols that score their own records (memory_ops, timerag, lamp1) use it.
    """
    from recallbench.metrics.estimators import estimate_one

    def part(group: Sequence[tuple[str, int, Sequence[float]]]) -> tuple[float, Additive | None]:
        if not group:
            return 0.0, None
        stat = Additive.from_items([c for c, _, _ in group], [list(v) for _, _, v in group], spec)
        return estimate_one(spec, stat.matrix.sum(axis=0)), stat

    value, stat = part(rows)
    entry: dict[str, JSONValue] = {"value": value, "n": len(rows), **ci_fields(stat)}
    if per_session:
        sessions: dict[int, list[tuple[str, int, Sequence[float]]]] = {}
        for row in rows:
            sessions.setdefault(row[1], []).append(row)
        per: dict[str, JSONValue] = {}
        for index, group in sorted(sessions.items()):
            v, st = part(group)
            per[str(index)] = {"value": v, "n": len(group), **ci_fields(st, full=False)}
        entry["per_session"] = per
    return entry
