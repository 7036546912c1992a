"""The paired sign-flip test: p-values enumerated by hand, scipy's exact permutation test on
the same data, tied clusters that cannot move it, and the Monte Carlo branch above 16."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as st

from recallbench.metrics.clusters import Additive, MeanOf, pooled
from recallbench.metrics.signflip import (
    pooled_statistic,
    sign_flip_floor,
    sign_flip_test,
    tied_clusters,
)

RATIO = {"fn": "ratio"}


def means(values: list[float], prefix: str = "e") -> Additive:
    """One item per cluster: the statistic is the mean of ``values``."""
    ids = [f"{prefix}{i}" for i in range(len(values))]
    return Additive.from_items(ids, [[v, 1.0] for v in values], RATIO)


def flip(a: Additive, b: Additive, **kw: int):
    both = pooled(a, b)
    assert both is not None
    n = len(a.ids)
    return sign_flip_test(pooled_statistic(both, n), tied_clusters(both, n), **kw)


@pytest.mark.parametrize(
    ("diffs", "expected"),
    [
        # +-1 +-2 +-3 over 3: sums 6 4 2 0 0 -2 -4 -6; one of 8 >= 6: p = 2 x 1/8
        ([1.0, 2.0, 3.0], 0.25),
        # observed 1 + 2 + 3 - 1 = 5 of +-1 +-2 +-3 +-1: 7 5 5 3 3 1 1 1 -1 -1 -1 -3 -3 -5 -5
        # -7; three >= 5: p = 2 x 3/16
        ([1.0, 2.0, 3.0, -1.0], 0.375),
        # +-1 +-1: 2 0 0 -2; both tails hold 0: min(3/4, 3/4) x 2 capped at 1
        ([1.0, -1.0], 1.0),
    ],
)
def test_exact_p_by_hand(diffs, expected):
    a, b = means(diffs), means([0.0] * len(diffs))
    got = flip(a, b)
    assert got.exact and got.n_assignments == 2 ** len(diffs)
    assert got.p_value == pytest.approx(expected)


def test_tied_clusters_set_the_floor_three_tied_of_ten():
    # three conversations on which both runs scored alike: 2^(1-7), not 2^(1-10)
    a = means([0.5, 0.5, 0.5, 0.9, 0.8, 0.7, 0.9, 0.6, 0.8, 0.7])
    b = means([0.5, 0.5, 0.5, 0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.4])
    got = flip(a, b)
    assert (got.n_clusters, got.informative, got.n_assignments) == (10, 7, 128)
    assert got.p_value == pytest.approx(2**-6) and got.floor == pytest.approx(2**-6)
    assert sign_flip_floor(10) == pytest.approx(2**-9)  # what counting every cluster claimed


def test_matches_scipy_exact_permutation_test_on_a_ratio_with_ties():
    rng = np.random.default_rng(3)
    n_items = rng.integers(1, 5, 9)  # a ratio of sums: clusters of different sizes
    ids = [f"c{i}" for i, k in enumerate(n_items) for _ in range(k)]
    xa = rng.uniform(0, 1, len(ids))
    xb = xa + rng.normal(0.1, 0.3, len(ids))
    tie = np.isin(ids, ["c2", "c5"])  # two clusters where both runs hold the same items
    xb[tie] = xa[tie]
    a = Additive.from_items(ids, np.c_[xa, np.ones(len(ids))], RATIO)
    b = Additive.from_items(ids, np.c_[xb, np.ones(len(ids))], RATIO)
    both = pooled(a, b)
    ours = flip(a, b)
    ref = st.permutation_test(
        (np.arange(9), np.arange(9, 18)),
        lambda x, y, axis=-1: both.values(x) - both.values(y),
        permutation_type="samples",
        vectorized=True,
        n_resamples=10_000,  # >= 2^9: scipy enumerates every assignment
        alternative="two-sided",
    )
    assert ours.informative == 7 and ours.exact
    assert ours.p_value == pytest.approx(min(1.0, float(ref.pvalue)), abs=1e-12)


def test_above_the_exact_limit_monte_carlo_says_how_many():
    a = means([0.9, 0.8, 0.2, 0.7, 0.9, 0.6])
    b = means([0.1, 0.3, 0.4, 0.2, 0.3, 0.1])
    exact = flip(a, b)
    drawn = flip(a, b, exact_up_to=4, n_monte_carlo=9_999, seed=1)
    assert not drawn.exact and drawn.n_assignments == 9_999
    assert "9,999 random assignments" in drawn.method
    assert drawn.floor == pytest.approx(max(2**-5, 2 / 10_000))
    # differences .8 .5 -.2 .5 .6 .5 (sum 2.7): flipping the -.2 alone gives 3.1, so 2 of 64
    # assignments are >= 2.7: p = 2 x 2/64; Monte Carlo within its error of that
    assert exact.p_value == pytest.approx(4 / 64)
    assert drawn.p_value == pytest.approx(exact.p_value, abs=0.01)


def test_identical_runs_have_no_informative_cluster():
    a = means([0.2, 0.4, 0.6])
    got = flip(a, means([0.2, 0.4, 0.6]))
    assert (got.p_value, got.informative, got.floor) == (1.0, 0, 1.0)


def test_a_mean_over_sessions_is_tied_only_where_every_session_is():
    s1a, s1b = means([0.1, 0.2, 0.3]), means([0.1, 0.2, 0.9])
    s2a, s2b = means([0.5, 0.5, 0.5]), means([0.5, 0.7, 0.5])
    both = pooled(MeanOf.of([s1a, s2a]), MeanOf.of([s1b, s2b]))
    assert both is not None
    assert tied_clusters(both, 3).tolist() == [True, False, False]
