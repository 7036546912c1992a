"""Paired sign-flip (within-cluster swap) tests: exact up to 16 informative clusters.

Under H0 the two runs compared in a paired test are exchangeable within each episode (cluster),
so every assignment that swaps the runs' statistics in some clusters is as likely as the
observed one. A cluster whose two runs hold the same statistics (a *tied* cluster: the same
rows, e.g. a conversation on which two methods answered alike) leaves the statistic where it
is when swapped; it cannot move the test. The null distribution is therefore the statistic
over the 2^k assignments of the k *informative* clusters (the others fixed):

- ``k <= exact_up_to`` (16 by default: 65,536 assignments): all of them are enumerated, and the
  two-sided p is ``2 min(#{t >= t_obs}, #{t <= t_obs}) / 2^k`` (capped at 1), the observed
  assignment included; this is ``scipy.stats.permutation_test(permutation_type="samples")``'s
  exact p (which enumerates all 2^n, the tied clusters doubling every count alike);
- above, ``n_monte_carlo`` random assignments (99,999 by default), two-sided
  ``p = 2 min(#{t >= t_obs} + 1, #{t <= t_obs} + 1) / (B + 1)`` (scipy's Monte Carlo p).

The smallest p a test can give (its *floor*): the observed assignment and its mirror are 2 of
the 2^k, so ``2^(1 - k)`` exact, and with B random assignments also ``2 / (B + 1)``. With no
informative cluster the two runs are the same data: p = 1. Ties in t are decided with scipy's
relative tolerance (100 machine epsilons of t_obs) so that both give the same p.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from recallbench.metrics.clusters import Additive, ClusterStatistic, MeanOf

__all__ = [
    "EXACT_UP_TO",
    "N_MONTE_CARLO",
    "SignFlip",
    "pooled_statistic",
    "sign_flip_floor",
    "sign_flip_test",
    "tied_clusters",
]

EXACT_UP_TO = 16  # informative clusters enumerated exactly (2^16 = 65,536 assignments)
N_MONTE_CARLO = 99_999  # random assignments above that: floor 2 / (B + 1) = 2e-5
_BATCH = 4096  # assignments per vectorized call

# swap[b, i] True: assignment b swaps the two runs in cluster i -> the statistic (a - b) under it
Statistic = Callable[[np.ndarray], np.ndarray]


def sign_flip_floor(informative: int, n_monte_carlo: int | None = None) -> float:
    """The smallest two-sided p on ``informative`` clusters: exact (``n_monte_carlo`` None)
    ``2^(1 - k)``; with B random assignments also no lower than ``2 / (B + 1)``."""
    exact = min(1.0, 2.0 ** (1 - informative))
    return exact if n_monte_carlo is None else max(exact, min(1.0, 2.0 / (n_monte_carlo + 1)))


@dataclass(frozen=True)
class SignFlip:
    """A sign-flip test's p, the clusters that could move it and how it was computed."""

    p_value: float
    n_clusters: int  # clusters both runs share
    informative: int  # of them, those whose two runs differ
    n_assignments: int  # 2^informative (exact) or the Monte Carlo draws
    exact: bool

    @property
    def floor(self) -> float:
        """The smallest p this test could have given (``sign_flip_floor``)."""
        return sign_flip_floor(self.informative, None if self.exact else self.n_assignments)

    @property
    def method(self) -> str:
        """How the null distribution was computed, in words."""
        if self.exact:
            return "exact sign flips over all 2^k assignments of the k clusters whose runs differ"
        return f"Monte Carlo sign flips, {self.n_assignments:,} random assignments"


def tied_clusters(pooled: ClusterStatistic, n: int) -> np.ndarray:
    """Which of ``n`` clusters hold the same statistics in both runs of a pooled statistic
    (``metrics.clusters.pooled``: positions 0..n-1 run a, n..2n-1 run b). A statistic of
    another kind is never tied (every cluster counts: the lower, safe floor)."""
    if isinstance(pooled, Additive):
        same = np.all(pooled.matrix[:n] == pooled.matrix[n:], axis=1)
        if pooled.present is not None:
            same &= pooled.present[:n] == pooled.present[n:]
        return np.asarray(same, dtype=bool)
    if isinstance(pooled, MeanOf) and pooled.parts:
        return np.asarray(np.all([tied_clusters(p, n) for p in pooled.parts], axis=0), dtype=bool)
    return np.zeros(n, dtype=bool)


def sign_flip_test(
    statistic: Statistic,
    tied: np.ndarray,
    *,
    exact_up_to: int = EXACT_UP_TO,
    n_monte_carlo: int = N_MONTE_CARLO,
    seed: int = 0,
) -> SignFlip:
    """Test the observed statistic (no swap) against its sign-flip null distribution.

    ``statistic`` maps a ``(B, n)`` boolean swap matrix to B values; ``tied`` (n,) marks the
    clusters a swap cannot move (they are never swapped).
    """
    tied = np.asarray(tied, dtype=bool)
    n = tied.size
    free = np.flatnonzero(~tied)
    k = free.size
    observed = float(statistic(np.zeros((1, n), dtype=bool))[0])
    if k == 0:
        return SignFlip(1.0, n, 0, 1, True)
    gamma = abs(np.finfo(float).eps * 100 * observed)
    exact = k <= exact_up_to
    total = 2**k if exact else n_monte_carlo
    rng = np.random.default_rng(seed)
    above = below = 0
    for start in range(0, total, _BATCH):
        size = min(_BATCH, total - start)
        if exact:
            codes = np.arange(start, start + size, dtype=np.int64)
            bits = ((codes[:, None] >> np.arange(k)) & 1).astype(bool)
        else:
            bits = rng.random((size, k)) < 0.5
        swap = np.zeros((size, n), dtype=bool)
        swap[:, free] = bits
        null = np.asarray(statistic(swap), dtype=float)
        above += int(np.count_nonzero(null >= observed - gamma))
        below += int(np.count_nonzero(null <= observed + gamma))
    extra = 0 if exact else 1
    p = 2 * min(above + extra, below + extra) / (total + extra)
    return SignFlip(float(min(1.0, p)), n, int(k), total, exact)


def pooled_statistic(pooled: ClusterStatistic, n: int) -> Statistic:
    """The statistic a - b of a pooled statistic (a's n clusters, then b's) under swaps
    (pooled statistics are additive or means of such: vectorized over the assignments)."""
    own = np.arange(n)

    def statistic(swap: np.ndarray) -> np.ndarray:
        x = np.where(swap, own + n, own)
        y = np.where(swap, own, own + n)
        return np.asarray(pooled.values(x) - pooled.values(y), dtype=float)

    return statistic
