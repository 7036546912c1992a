"""Summary statistics for per-item scores: mean with a t confidence interval, paired t-test.

Used by run summaries and paper tables, where the papers claim "significant (p < 0.05)".
Results are JSON-safe in every case: degenerate inputs (n < 2, zero variance) return documented
finite values instead of NaN or inf.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from scipy import stats as st

_MAX_T = sys.float_info.max  # stands in for an infinite t (JSON has no inf)


class MeanCI(NamedTuple):
    """Sample mean with a two-sided confidence interval: unpacks as ``mean, low, high``."""

    mean: float
    low: float
    high: float


class TTest(NamedTuple):
    """Paired t-test result: statistic, two-sided p-value, number of pairs (``t, p, n``)."""

    t: float
    p: float
    n: int


def _values(values: Sequence[float], what: str) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{what}: expected a flat sequence of numbers, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{what}: values must be finite (found NaN or inf)")
    return arr


def mean_ci(values: Sequence[float], confidence: float = 0.95) -> MeanCI:
    """Return the mean and its t-distribution confidence interval.

    mean +- t_{(1+confidence)/2, n-1} * s / sqrt(n), s the sample standard deviation (ddof=1).
    n = 0 gives all zeros; n = 1 or zero variance gives low = high = mean. ``_asdict()`` gives
    a JSON-ready dict.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    arr = _values(values, "mean_ci")
    n = int(arr.size)
    if n == 0:
        return MeanCI(0.0, 0.0, 0.0)
    m = float(arr.mean())
    if n == 1:
        return MeanCI(m, m, m)
    half = float(st.t.ppf((1 + confidence) / 2, n - 1) * arr.std(ddof=1) / math.sqrt(n))
    return MeanCI(m, m - half, m + half)


def paired_ttest(a: Sequence[float], b: Sequence[float]) -> TTest:
    """Two-sided paired t-test of a vs b (``scipy.stats.ttest_rel``); t > 0 means a > b.

    Degenerate cases: n < 2 or all differences zero -> t = 0, p = 1; constant non-zero
    differences -> t = +-float max, p = 0 (the limit of the test).
    """
    x, y = _values(a, "paired_ttest a"), _values(b, "paired_ttest b")
    if x.size != y.size:
        raise ValueError(f"paired_ttest: {x.size} vs {y.size} values; pairs must align")
    n = int(x.size)
    diff = x - y
    if n < 2 or not diff.any():
        return TTest(0.0, 1.0, n)
    if np.all(diff == diff[0]):
        return TTest(math.copysign(_MAX_T, float(diff[0])), 0.0, n)
    result = st.ttest_rel(x, y)
    t, p = float(result.statistic), float(result.pvalue)
    if not math.isfinite(t):  # differences equal up to rounding
        return TTest(math.copysign(_MAX_T, float(diff.mean())), 0.0, n)
    return TTest(t, p, n)
