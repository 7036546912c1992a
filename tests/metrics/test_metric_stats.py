"""mean_ci and paired_ttest: hand-computed values, scipy agreement, degenerate inputs."""

from __future__ import annotations

import json
import math
import sys

import pytest
from scipy import stats as st

from recallbench.metrics.stats import mean_ci, paired_ttest


def test_mean_ci_by_hand():
    # mean 3, s = sqrt(2.5), t_{0.975, 4} = 2.776445, half = 2.776445 * 1.581139 / sqrt(5)
    mean, low, high = mean_ci([1, 2, 3, 4, 5])
    assert mean == 3.0
    assert (low, high) == pytest.approx((3 - 1.963243, 3 + 1.963243), abs=1e-6)
    wider = mean_ci([1, 2, 3, 4, 5], confidence=0.99)
    assert wider.low < low and wider.high > high


def test_mean_ci_agrees_with_scipy_interval():
    values = [0.31, 0.27, 0.45, 0.12, 0.38, 0.29, 0.33]
    want = st.t.interval(0.95, len(values) - 1, loc=sum(values) / 7, scale=st.sem(values))
    got = mean_ci(values)
    assert (got.low, got.high) == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize(
    "values,expected",
    [([], (0.0, 0.0, 0.0)), ([0.7], (0.7, 0.7, 0.7)), ([2.0, 2.0, 2.0], (2.0, 2.0, 2.0))],
)
def test_mean_ci_degenerate(values, expected):
    result = mean_ci(values)
    assert tuple(result) == pytest.approx(expected)
    json.dumps(result._asdict(), allow_nan=False)


def test_paired_ttest_by_hand():
    # differences 1 0 2 1: mean 1, sd sqrt(2/3), t = 1 / (sd / 2) = 2.449490, df 3
    t, p, n = paired_ttest([1, 2, 3, 4], [0, 2, 1, 3])
    assert n == 4 and t == pytest.approx(2.449490, abs=1e-6)
    assert p == pytest.approx(2 * st.t.sf(2.449490, 3), abs=1e-6)
    assert p == pytest.approx(0.0917, abs=1e-4)
    assert paired_ttest([0, 2, 1, 3], [1, 2, 3, 4]).t == pytest.approx(-t)


@pytest.mark.parametrize(
    "a,b,expected",
    [
        ([], [], (0.0, 1.0, 0)),
        ([1.0], [0.0], (0.0, 1.0, 1)),
        ([0.5, 0.7], [0.5, 0.7], (0.0, 1.0, 2)),
        ([1.0, 2.0, 3.0], [0.0, 1.0, 2.0], (sys.float_info.max, 0.0, 3)),
        ([0.0, 1.0, 2.0], [1.0, 2.0, 3.0], (-sys.float_info.max, 0.0, 3)),
    ],
)
def test_paired_ttest_degenerate_is_json_safe(a, b, expected):
    result = paired_ttest(a, b)
    assert tuple(result) == expected
    json.dumps(result._asdict(), allow_nan=False)


def test_stats_reject_bad_input():
    with pytest.raises(ValueError, match="pairs must align"):
        paired_ttest([1, 2], [1])
    with pytest.raises(ValueError, match="finite"):
        mean_ci([1.0, math.nan])
    with pytest.raises(ValueError, match="confidence"):
        mean_ci([1.0], confidence=95)
