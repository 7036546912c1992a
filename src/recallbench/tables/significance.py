"""Paired tests of every row against the table's reference row, Holm-corrected across the table.

A table names its reference row in its ``table:`` block::

    reference_row: Naive RAG     # the row every other row is compared with, or a mapping
                                 # row -> its reference row (rows not listed are not tested),
                                 # e.g. {"GPT-4o / CAIM": "GPT-4o / MemoryBank", ...}
    pair_by: user                # episode (default) | user: pair LUFY's lufy/<system>/<user>
                                 # episodes of different systems' logs by user
    significance: {alpha: 0.05, n_resamples: 2000, seed: 0, family: table}   # optional
                                 # (these are the defaults); family: column makes each column's
                                 # tests a Holm family of their own (the cross-paper matrix,
                                 # whose columns are separate settings on separate data)

For every cell (row, column, metric) of another row whose runs share episodes with the reference
row's cell, the difference ours - reference is tested by episode:

- one run per cell: ``metrics.bootstrap.paired_test`` (a paired permutation test swapping the
  two runs within each episode when both values are the same estimator of additive statistics,
  else the paired bootstrap's two-sided p);
- several runs per cell (pooled datasets): the runs are paired by dataset and the test is the
  same permutation test, the two rows swapped within each episode of every dataset and the
  cell's n-weighted value recomputed (exact when 2^episodes <= resamples); where the statistics
  are not exchangeable, a stratified paired bootstrap (each dataset's shared episodes resampled
  together), two-sided p = 2 (k + 1) / (B + 1) with k the resampled differences on the smaller
  side of 0 (anti-conservative with very few episodes: the test name is in the notes).

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
from recallbench.tables.intervals import Found, stratified_values

if TYPE_CHECKING:
    from recallbench.tables.spec import TableSpec

__all__ = ["FAMILIES", "PAIR_KEYS", "Settings", "Tested", "pair_test", "settings_of"]

FAMILIES = ("table", "column")  # what one Holm correction spans
SIGNIFICANCE_KEYS = ("alpha", "n_resamples", "seed", "family")  # of ``significance:``

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
    """One comparison: difference, raw p, the test's name and the shared episodes."""

    diff: float
    p_value: float
    test: str
    n_clusters: int


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
    return Settings(reference, pair_by, float(extra.get("alpha", 0.05)), boot, family)


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
            t = paired_test(stat_a, stat_b, settings.bootstrap, key)
        except ValueError as exc:
            return str(exc)
        if t.n_clusters < 2:
            return "fewer than 2 shared episodes"
        return Tested(t.diff, t.p_value, t.test, t.n_clusters)
    return _stratified(sa, sb, settings, key)


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
    p_perm = _stratified_permutation(pairs, settings)
    if p_perm is not None:
        test = "paired permutation by episode within each dataset (scipy.stats.permutation_test)"
        return Tested(diff, p_perm, test, clusters)
    p_boot = _stratified_bootstrap(pairs, settings)
    if p_boot is None:
        return "fewer than 2 shared episodes per dataset"
    return Tested(diff, p_boot, "stratified paired bootstrap by episode (per dataset)", clusters)


def _stratified_permutation(pairs: Sequence[_Pair], settings: Settings) -> float | None:
    """Swap the two runs within episodes (every dataset at once); None when not exchangeable.

    Positions 0..N-1 are the episodes of all datasets for run a, N..2N-1 the same for run b;
    ``permutation_type="samples"`` swaps position i with N + i, and each dataset's pooled
    statistic (``metrics.clusters.pooled``: a's rows then b's) maps them to its own rows.
    """
    from scipy import stats as st

    maybe_pooled = [pooled(p.a, p.b) for p in pairs]
    pooled_stats = [ps for ps in maybe_pooled if ps is not None]
    if len(pooled_stats) < len(maybe_pooled):
        return None
    sizes = [len(p.ids) for p in pairs]
    total, offsets = sum(sizes), np.cumsum([0, *sizes])
    local = np.empty(2 * total, dtype=int)
    for n, o in zip(sizes, offsets[:-1], strict=True):
        local[o : o + n] = np.arange(n)
        local[total + o : total + o + n] = n + np.arange(n)

    def side(idx: np.ndarray, weights: Sequence[float]) -> np.ndarray | float:
        return sum(
            w * ps.values(local[idx[..., o : o + n]])
            for w, ps, n, o in zip(weights, pooled_stats, sizes, offsets, strict=False)
        )

    res = st.permutation_test(
        (np.arange(total), np.arange(total, 2 * total)),
        lambda x, y, axis=-1: side(x, [p.wa for p in pairs]) - side(y, [p.wb for p in pairs]),
        permutation_type="samples",
        vectorized=all(ps.vectorized for ps in pooled_stats),
        n_resamples=settings.bootstrap.n_resamples,
        alternative="two-sided",
        rng=np.random.default_rng(settings.bootstrap.seed),
    )
    return float(min(1.0, res.pvalue))


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
