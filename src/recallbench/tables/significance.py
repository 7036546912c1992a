"""Paired tests of every row against the table's reference row, Holm-corrected across the table.

A table names its reference row in its ``table:`` block::

    reference_row: Naive RAG     # the row every other row is compared with, or a mapping
                                 # row -> its reference row (rows not listed are not tested),
                                 # e.g. {"GPT-4o / CAIM": "GPT-4o / MemoryBank", ...}
    pair_by: user                # episode (default) | user: pair LUFY's lufy/<system>/<user>
                                 # episodes of different systems' logs by user
    significance: {alpha: 0.05, n_resamples: 2000, seed: 0, family: table,
                   exact_up_to: 16, n_permutations: 99999}   # optional (the defaults);
                                 # n_resamples: the paired bootstrap's; family: column makes each column's
                                 # tests a Holm family of their own (the cross-paper matrix,
                                 # whose columns are separate settings on separate data)

For every cell (row, column, metric) of another row whose runs share episodes with the reference
row's cell, the difference ours - reference is tested by episode:

- when both cells' statistics are the same estimator of additive statistics (or a mean of such
  over sessions), a paired sign-flip test (``metrics.signflip``): the two rows swapped within
  episodes, the cell's value recomputed; exact over all 2^k assignments of the k episodes whose
  two runs differ when k <= ``exact_up_to`` (16), else ``n_permutations`` (99,999) random
  assignments. Pooled cells (several datasets) pair the runs by dataset and swap within each
  episode of every dataset, recomputing the n-weighted value. The test's floor (its smallest
  attainable p) counts only the k episodes that differ;
- otherwise the paired bootstrap's two-sided p (``metrics.bootstrap.paired_test``; pooled:
  each dataset's shared episodes resampled together), 2 (k + 1) / (B + 1) with k the resampled
  differences on the smaller side of 0 (anti-conservative with very few episodes: the test
  name is in the notes); its floor is taken as max(2^(1 - n), 2 / (B + 1)) on the n shared
  episodes, the sign-flip bound, so that a bootstrap on 3 episodes never enters a Holm family.

Which tests form the table's Holm family, and the notes that document it:
``tables.family.mark_significance``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from recallbench.metrics.bootstrap import Bootstrap, paired_test, rekeyed
from recallbench.metrics.clusters import ClusterStatistic, pooled
from recallbench.metrics.signflip import (
    EXACT_UP_TO,
    N_MONTE_CARLO,
    SignFlip,
    pooled_statistic,
    sign_flip_floor,
    sign_flip_test,
    tied_clusters,
)
from recallbench.tables.intervals import Found, stratified_values

if TYPE_CHECKING:
    from recallbench.tables.spec import TableSpec

__all__ = ["FAMILIES", "PAIR_KEYS", "Settings", "Tested", "pair_test", "settings_of"]

FAMILIES = ("table", "column")  # what one Holm correction spans
SIGNIFICANCE_KEYS = (
    "alpha",
    "n_resamples",
    "seed",
    "family",
    "exact_up_to",
    "n_permutations",
)  # of ``significance:``

PAIR_KEYS: dict[str, Callable[[str], str] | None] = {
    "episode": None,
    "user": lambda episode: episode.rsplit("/", 1)[-1],
}


@dataclass(frozen=True)
class Settings:
    """The reference row, how episodes pair, the level and the resampling settings."""

    reference_row: str | Mapping[str, str]
    pair_by: str = "episode"
    alpha: float = 0.05
    bootstrap: Bootstrap = Bootstrap()
    family: str = "table"  # "column": each column's tests are a Holm family of their own
    exact_up_to: int = EXACT_UP_TO  # sign flips enumerated exactly up to this many episodes
    n_permutations: int = N_MONTE_CARLO  # random sign flips above that

    def reference_of(self, row: str) -> str | None:
        """The row ``row`` is compared with (None: not tested)."""
        if isinstance(self.reference_row, str):
            return None if row == self.reference_row else self.reference_row
        return self.reference_row.get(row)

    def describe(self) -> str:
        """The reference row(s) in words."""
        if isinstance(self.reference_row, str):
            return f"the reference row '{self.reference_row}'"
        pairs = ", ".join(f"'{r}' vs '{b}'" for r, b in self.reference_row.items())
        return f"its reference row ({pairs})"


@dataclass(frozen=True)
class Tested:
    """One comparison: difference, raw p, the test's name, the shared episodes, how many of
    them differ between the two rows, and the smallest p the test could have given."""

    diff: float
    p_value: float
    test: str
    n_clusters: int
    informative: int
    floor: float
    exact: bool = False


def _flipped(diff: float, t: SignFlip, test: str) -> Tested:
    return Tested(diff, t.p_value, test, t.n_clusters, t.informative, t.floor, t.exact)


def settings_of(spec: TableSpec) -> Settings | None:
    """Read ``reference_row``, ``pair_by`` and ``significance`` of a table spec (None: no tests)."""
    row = spec.option("reference_row", None)
    if row is None:
        return None
    labels = [r.label for r in spec.rows]
    named = [*row.keys(), *row.values()] if isinstance(row, Mapping) else [row]
    for label in named:
        if spec.rows and str(label) not in labels:
            raise spec.error("reference_row", f"{label!r} is not a row label (rows: {labels})")
    if isinstance(row, Mapping):
        row = {str(k): str(v) for k, v in row.items()}
    pair_by = str(spec.option("pair_by", "episode"))
    if pair_by not in PAIR_KEYS:
        raise spec.error("pair_by", f"expected one of {sorted(PAIR_KEYS)}, got {pair_by!r}")
    extra = spec.option("significance", None) or {}
    if not isinstance(extra, Mapping) or not set(extra) <= set(SIGNIFICANCE_KEYS):
        keys = ", ".join(SIGNIFICANCE_KEYS)
        raise spec.error("significance", f"expected keys {keys}; got {extra!r}")
    family = str(extra.get("family", "table"))
    if family not in FAMILIES:
        raise spec.error("significance.family", f"expected one of {FAMILIES}, got {family!r}")
    boot = Bootstrap(
        n_resamples=int(extra.get("n_resamples", 2000)), seed=int(extra.get("seed", 0))
    )
    reference = row if isinstance(row, Mapping) else str(row)
    exact = int(extra.get("exact_up_to", EXACT_UP_TO))
    draws = int(extra.get("n_permutations", N_MONTE_CARLO))
    return Settings(reference, pair_by, float(extra.get("alpha", 0.05)), boot, family, exact, draws)


Strata = dict[str, tuple[float, ClusterStatistic]]  # dataset -> (weight, statistic)


def _strata(found: Sequence[Found]) -> Strata | None:
    weighted = [f for f in found if f.n > 0]
    if not weighted or any(f.stat is None for f in weighted):
        return None
    total = sum(f.n for f in weighted)
    out: dict[str, tuple[float, ClusterStatistic]] = {}
    for f in weighted:
        if f.stratum in out:  # two runs of one dataset in a cell: cannot pair them
            return None
        out[f.stratum] = (f.n / total, f.stat)  # type: ignore[assignment]
    return out


def pair_test(a: Sequence[Found], b: Sequence[Found], settings: Settings) -> Tested | str:
    """Test cell ``a`` against the reference cell ``b``; a string says why there is no test."""
    key = PAIR_KEYS[settings.pair_by]
    sa, sb = _strata(a), _strata(b)
    if sa is None or sb is None:
        return "no per-episode statistics"
    if set(sa) != set(sb):
        return f"the cells pool different datasets ({sorted(sa)} vs {sorted(sb)})"
    if len(sa) == 1:
        (_, stat_a), (_, stat_b) = next(iter(sa.values())), next(iter(sb.values()))
        try:
            return _single(stat_a, stat_b, settings, key)
        except ValueError as exc:  # a pairing key that maps two episodes to one
            return str(exc)
    return _stratified(sa, sb, settings, key)


def _bootstrap_floor(n: int, settings: Settings) -> float:
    return max(sign_flip_floor(n), 2.0 / (settings.bootstrap.n_resamples + 1))


def _flip(statistic: Callable[[np.ndarray], np.ndarray], tied: np.ndarray, s: Settings) -> SignFlip:
    return sign_flip_test(
        statistic,
        tied,
        exact_up_to=s.exact_up_to,
        n_monte_carlo=s.n_permutations,
        seed=s.bootstrap.seed,
    )


def _single(
    a: ClusterStatistic, b: ClusterStatistic, settings: Settings, key: Callable[[str], str] | None
) -> Tested | str:
    """Sign-flip test of one run against one (paired bootstrap when not exchangeable)."""
    if key is not None:
        a, b = rekeyed(a, key), rekeyed(b, key)
    shared = [c for c in a.ids if c in set(b.ids)]
    if not shared:
        return "paired_test: the two runs share no episode"
    if len(shared) < 2:
        return "fewer than 2 shared episodes"
    a, b = a.aligned(shared), b.aligned(shared)
    both = pooled(a, b)
    if both is None:
        t = paired_test(a, b, settings.bootstrap)
        floor = _bootstrap_floor(t.n_clusters, settings)
        return Tested(t.diff, t.p_value, t.test, t.n_clusters, t.n_clusters, floor)
    n = len(shared)
    flip = _flip(pooled_statistic(both, n), tied_clusters(both, n), settings)
    return _flipped(a.value() - b.value(), flip, f"paired sign-flip by episode ({flip.method})")


def _stratified(
    sa: Strata, sb: Strata, settings: Settings, key: Callable[[str], str] | None
) -> Tested | str:
    """Paired test over the runs' shared episodes, dataset by dataset (pooled cells)."""
    pairs, clusters = [], 0
    for name in sorted(sa):
        (wa, a), (wb, b) = sa[name], sb[name]
        if key is not None:
            a, b = rekeyed(a, key), rekeyed(b, key)
        shared = [c for c in a.ids if c in set(b.ids)]
        if not shared:
            return f"no shared episode in {name}"
        clusters += len(shared)
        pairs.append(_Pair(wa, a.aligned(shared), wb, b.aligned(shared)))
    if clusters < 2:
        return "fewer than 2 shared episodes"
    diff = float(sum(p.value() for p in pairs))
    flip = _stratified_flip(pairs, settings)
    if flip is not None:
        test = f"paired sign-flip by episode within each dataset ({flip.method})"
        return _flipped(diff, flip, test)
    p_boot = _stratified_bootstrap(pairs, settings)
    if p_boot is None:
        return "fewer than 2 shared episodes per dataset"
    test = "stratified paired bootstrap by episode (per dataset)"
    return Tested(diff, p_boot, test, clusters, clusters, _bootstrap_floor(clusters, settings))


def _stratified_flip(pairs: Sequence[_Pair], settings: Settings) -> SignFlip | None:
    """Swap the two runs within episodes (every dataset at once); None when not exchangeable.

    Each dataset's pooled statistic (``metrics.clusters.pooled``: a's rows then b's) is swapped
    within its own episodes; the datasets' n-weighted differences are summed.
    """
    maybe_pooled = [pooled(p.a, p.b) for p in pairs]
    pooled_stats = [ps for ps in maybe_pooled if ps is not None]
    if len(pooled_stats) < len(maybe_pooled):
        return None
    sizes = [len(p.ids) for p in pairs]
    offsets = np.cumsum([0, *sizes])

    def statistic(swap: np.ndarray) -> np.ndarray:
        out = np.zeros(swap.shape[0])
        for p, ps, n, o in zip(pairs, pooled_stats, sizes, offsets, strict=False):
            own, flip = np.arange(n), swap[:, o : o + n]
            x, y = np.where(flip, own + n, own), np.where(flip, own, own + n)
            out += p.wa * ps.values(x) - p.wb * ps.values(y)
        return out

    tied = np.concatenate([tied_clusters(ps, n) for ps, n in zip(pooled_stats, sizes, strict=True)])
    return _flip(statistic, tied, settings)


def _stratified_bootstrap(pairs: Sequence[_Pair], settings: Settings) -> float | None:
    """Two-sided paired-bootstrap p (each dataset's shared episodes resampled on their own)."""
    from scipy import stats as st

    # one sample of episode positions per dataset drives both runs: the pairing
    samples, statistic = stratified_values([(1.0, p) for p in pairs])
    if not samples:
        return None
    boot = st.bootstrap(
        tuple(samples),
        statistic,
        n_resamples=settings.bootstrap.n_resamples,
        confidence_level=settings.bootstrap.confidence,
        method=settings.bootstrap.method,
        vectorized=statistic.vectorized,
        rng=np.random.default_rng(settings.bootstrap.seed),
    )
    dist = np.asarray(boot.bootstrap_distribution)
    tail = min(int(np.sum(dist <= 0)), int(np.sum(dist >= 0)))
    return min(1.0, 2 * (tail + 1) / (dist.size + 1))


@dataclass(frozen=True, eq=False)
class _Pair(ClusterStatistic):
    """wa * a - wb * b on the same episode positions (one dataset of a paired difference)."""

    wa: float
    a: ClusterStatistic
    wb: float
    b: ClusterStatistic

    @property
    def ids(self) -> tuple[str, ...]:  # type: ignore[override]
        return self.a.ids

    @property
    def vectorized(self) -> bool:  # type: ignore[override]
        return self.a.vectorized and self.b.vectorized

    def values(self, idx: np.ndarray) -> np.ndarray:
        return self.wa * self.a.values(idx) - self.wb * self.b.values(idx)

    def aligned(self, ids: Sequence[str]) -> _Pair:
        return _Pair(self.wa, self.a.aligned(ids), self.wb, self.b.aligned(ids))
