"""Agreement statistics against textbook values (Shrout & Fleiss 1979; Fleiss 1971; Cohen)."""

from __future__ import annotations

import numpy as np
import pytest

from recallbench.metrics.agreement import (
    agreement_report,
    agreement_statistics,
    align_ratings,
    cohen_kappa,
    fleiss_kappa,
    fleiss_kappa_counts,
    icc,
    icc_mcgraw_wong,
    mean_squares,
    pairwise_agreement,
    percent_agreement,
)

# Shrout & Fleiss (1979), Table 2: 6 targets rated by 4 judges.
SHROUT_FLEISS = [
    [9, 2, 5, 8],
    [6, 1, 3, 2],
    [8, 4, 6, 8],
    [7, 1, 2, 6],
    [10, 5, 6, 9],
    [6, 2, 4, 7],
]
# Their Table 3 (mean squares: BMS 11.24, WMS 6.26, JMS 32.49, EMS 1.02) and Table 4 (ICCs).
SF_ICC = [
    ("1", False, 0.17),
    ("2", False, 0.29),
    ("3", False, 0.71),
    ("1", True, 0.44),
    ("2", True, 0.62),
    ("3", True, 0.91),
]


def test_mean_squares_shrout_fleiss() -> None:
    ms = mean_squares(SHROUT_FLEISS)
    assert ms["BMS"] == pytest.approx(11.24, abs=0.01)
    assert ms["WMS"] == pytest.approx(6.26, abs=0.01)
    assert ms["JMS"] == pytest.approx(32.49, abs=0.01)
    assert ms["EMS"] == pytest.approx(1.02, abs=0.01)


@pytest.mark.parametrize(("form", "average", "expected"), SF_ICC)
def test_icc_shrout_fleiss(form: str, average: bool, expected: float) -> None:
    assert icc(SHROUT_FLEISS, form, average=average) == pytest.approx(expected, abs=0.005)


def test_fleiss_kappa_fleiss_1971_example() -> None:
    # The 10 subjects x 5 categories x 14 raters example (Fleiss 1971 as tabulated on
    # Wikipedia's "Fleiss' kappa"): P-bar = 0.378, P-bar_e = 0.213, kappa = 0.210.
    counts = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    assert fleiss_kappa_counts(counts) == pytest.approx(0.210, abs=0.001)


def test_cohen_kappa_by_hand() -> None:
    # 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> po = 0.7, pe = 0.5, kappa = 0.4.
    a = [1] * 25 + [0] * 25
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    # Fleiss' kappa of two raters differs from Cohen's (pooled marginals): by hand
    # p(yes) = 55/100, pe = 0.55^2 + 0.45^2 = 0.505, kappa = (0.7 - 0.505) / 0.495.
    assert fleiss_kappa(np.column_stack([a, b])) == pytest.approx(0.195 / 0.495)


def test_percent_agreement_all_raters_vs_pairwise() -> None:
    ratings = [[1, 1, 1], [0, 0, 1], [0.5, 0.5, 0.5], [1, 0, 0.5]]
    assert percent_agreement(ratings) == pytest.approx(2 / 4)
    # pairs (0,1): 3/4, (0,2): 2/4, (1,2): 2/4
    assert pairwise_agreement(ratings) == pytest.approx((3 / 4 + 2 / 4 + 2 / 4) / 3)


def test_low_variability_icc_is_low_or_undefined() -> None:
    # CAIM Table 2's point: raters agree on almost everything, yet the ICC is ~0.
    ratings = [[1, 1]] * 18 + [[1, 0.5], [0.5, 1]]
    report = agreement_report(ratings)
    assert report["percent_agreement"] == pytest.approx(0.9)
    # by hand: BMS = 0.225 / 19, EMS = 0.25 / 19, ICC(3,1) = (0.225 - 0.25) / (0.225 + 0.25)
    assert report["icc_c1"] == pytest.approx(-0.025 / 0.475)
    assert icc([[1, 1], [1, 1]]) is None
    assert cohen_kappa([1, 1, 1], [1, 1, 1]) is None


def test_report_and_alignment() -> None:
    raters, items, x = align_ratings(
        {
            "a": {"q1": 1.0, "q2": 0.0, "q3": None, "q4": 1.0},
            "b": {"q1": 1.0, "q2": 1.0, "q3": 0.5},
        }
    )
    assert raters == ["a", "b"] and items == ["q1", "q2"]
    assert x.tolist() == [[1.0, 1.0], [0.0, 1.0]]
    report = agreement_report(SHROUT_FLEISS)
    assert report["n_items"] == 6 and report["n_raters"] == 4 and "cohen_kappa" not in report
    with pytest.raises(ValueError, match="raters"):
        align_ratings({"a": {"q1": 1.0}})
    with pytest.raises(ValueError, match="shape"):
        agreement_report([[1.0], [0.0]])
    with pytest.raises(ValueError, match="NaN"):
        percent_agreement([[1.0, float("nan")]])


def test_harsh_rater_absolute_vs_consistency() -> None:
    # Rater B gives every item one point less than A. By hand (n = 4, k = 2): grand mean 2,
    # SS_items = 2 * (1.5^2 + 0.5^2 + 0.5^2 + 1.5^2) = 10 -> BMS = 10/3; SS_raters = 4 * 2 * 0.5^2
    # = 2 -> JMS = 2; SS_total = 12 -> SS_error = 0 -> EMS = 0. Consistency ICC(C,1) =
    # (BMS - EMS) / (BMS + EMS) = 1; absolute ICC(A,1) = BMS / (BMS + k (JMS - EMS) / n) = 10/13.
    harsh = [[4, 3], [3, 2], [2, 1], [1, 0]]
    assert icc_mcgraw_wong(harsh, "C") == pytest.approx(1.0)
    assert icc_mcgraw_wong(harsh, "A") == pytest.approx(10 / 13)
    # ICC(A,k) = BMS / (BMS + (JMS - EMS) / n) = (10/3) / (10/3 + 1/2) = 20/23
    assert icc_mcgraw_wong(harsh, "A", average=True) == pytest.approx(20 / 23)
    report = agreement_report(harsh)
    assert report["icc_a1"] == pytest.approx(10 / 13) and report["icc_c1"] == pytest.approx(1.0)
    # Without a systematic offset the two definitions agree in the limit: identical raters.
    same = [[4, 4], [3, 3], [2, 2], [1, 1]]
    assert icc_mcgraw_wong(same, "A") == icc_mcgraw_wong(same, "C") == pytest.approx(1.0)
    with pytest.raises(ValueError, match="absolute"):
        icc_mcgraw_wong(harsh, "B")  # type: ignore[arg-type]


def test_agreement_statistics_resample_users() -> None:
    from recallbench.metrics.bootstrap import cluster_ci

    ratings = [[1, 1], [0, 0], [1, 0], [1, 1], [0, 1], [0, 0], [1, 1], [0.5, 0.5]]
    users = ["u1", "u1", "u1", "u2", "u2", "u3", "u3", "u3"]
    stats = agreement_statistics(ratings, users)
    assert stats["percent_agreement"].value() == pytest.approx(6 / 8)
    assert stats["icc_a1"].value() == pytest.approx(icc(ratings, "2"))
    for stat in stats.values():
        interval = cluster_ci(stat)
        assert interval.n_clusters == 3 and interval.low <= interval.value <= interval.high
