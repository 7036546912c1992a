"""Inter-rater agreement for any judged metric: percent agreement, ICC, Cohen's and Fleiss' kappa.

Ratings are an ``(n items, k raters)`` matrix. All six Shrout & Fleiss (1979) forms are available:

    ICC(1,1) = (BMS - WMS) / (BMS + (k-1) WMS)           ICC(1,k) = (BMS - WMS) / BMS
    ICC(2,1) = (BMS - EMS) / (BMS + (k-1) EMS + k (JMS - EMS) / n)
    ICC(2,k) = (BMS - EMS) / (BMS + (JMS - EMS) / n)
    ICC(3,1) = (BMS - EMS) / (BMS + (k-1) EMS)           ICC(3,k) = (BMS - EMS) / BMS

(BMS between-items, WMS within-items, JMS between-raters, EMS residual mean squares.) McGraw &
Wong (1996) name them by definition rather than by model: absolute agreement ICC(A,1) / ICC(A,k)
is computed by the ICC(2,*) formulas, consistency ICC(C,1) / ICC(C,k) by the ICC(3,*) ones, in
the two-way random and the two-way mixed (fixed raters) model alike (``icc_mcgraw_wong``).
Absolute agreement counts a rater who is systematically harsher as disagreeing; consistency
does not (raters [4, 3, 2, 1] and [3, 2, 1, 0]: ICC(C,1) = 1, ICC(A,1) = 10/13).

CAIM (sec. 4.1.4, Table 2) reports Percent Agreement and an ICC "using the two-way fixed effect
model, where all raters assess each item" following McGraw & Wong's flow chart, and says the ICC
"measures absolute agreement between raters": that is ICC(A,1), the form
``recallbench.papers.caim.agreement`` reports (``agreement_report["icc_a1"]``).

Percent agreement: the share of items on which all k raters gave the same label (CAIM: "agreed
on 93 out of 100 instances"); ``pairwise_agreement`` averages over rater pairs instead.

Undefined values (an ICC or kappa whose denominator is 0, e.g. every rating identical) are
returned as None, never NaN: CAIM's own Table 2 shows why (high agreement, ICC near 0 when the
ratings hardly vary).

```python
from recallbench.metrics.agreement import agreement_report, icc_mcgraw_wong
agreement_report([[1, 1], [0, 0], [1, 0.5]])   # {"n_items": 3, "percent_agreement": 0.667, ...}
icc_mcgraw_wong([[4, 3], [3, 2], [2, 1], [1, 0]], "A")   # 0.769 (= 10/13): B is one point harsher
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import TYPE_CHECKING, Literal

import numpy as np

from recallbench.verdict import JSONValue

if TYPE_CHECKING:
    from recallbench.metrics.bootstrap import ClusterStatistic

ICCForm = Literal["1", "2", "3"]


Ratings = Sequence[Sequence[float]] | np.ndarray  # (n items, k raters)


def as_matrix(ratings: Ratings) -> np.ndarray:
    """Return ratings as a float ``(n, k)`` array; raise on ragged, empty or non-finite input."""
    try:
        x = np.asarray(ratings, dtype=float)
    except ValueError as exc:
        raise ValueError(f"ratings must be an (items x raters) table of numbers: {exc}") from exc
    if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 2:
        raise ValueError(f"ratings must be (n items >= 1) x (k raters >= 2), got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError("ratings contain NaN or inf: drop unrated items first (align_ratings)")
    return x


def percent_agreement(ratings: Ratings) -> float:
    """Return the share of items on which every rater gave the same rating."""
    x = as_matrix(ratings)
    return float(np.mean(np.all(x == x[:, :1], axis=1)))


def pairwise_agreement(ratings: Ratings) -> float:
    """Return the mean, over rater pairs, of the share of items the pair rated identically."""
    x = as_matrix(ratings)
    pairs = list(combinations(range(x.shape[1]), 2))
    return float(np.mean([np.mean(x[:, a] == x[:, b]) for a, b in pairs]))


def mean_squares(ratings: Ratings) -> dict[str, float]:
    """Return the two-way ANOVA mean squares BMS, WMS, JMS, EMS of Shrout & Fleiss (1979)."""
    x = as_matrix(ratings)
    n, k = x.shape
    grand = x.mean()
    ss_rows = k * float(((x.mean(axis=1) - grand) ** 2).sum())
    ss_cols = n * float(((x.mean(axis=0) - grand) ** 2).sum())
    ss_total = float(((x - grand) ** 2).sum())
    ss_err = ss_total - ss_rows - ss_cols
    nan = float("nan")
    return {
        "BMS": ss_rows / (n - 1) if n > 1 else nan,
        "WMS": (ss_total - ss_rows) / (n * (k - 1)),
        "JMS": ss_cols / (k - 1),
        "EMS": ss_err / ((n - 1) * (k - 1)) if n > 1 else nan,
    }


def icc(ratings: Ratings, form: ICCForm = "3", average: bool = False) -> float | None:
    """Return Shrout & Fleiss ICC(form, 1), or ICC(form, k) with ``average`` (None: undefined)."""
    x = as_matrix(ratings)
    n, k = x.shape
    ms = mean_squares(x)
    bms, wms, jms, ems = ms["BMS"], ms["WMS"], ms["JMS"], ms["EMS"]
    if form == "1":
        num, den = bms - wms, (bms if average else bms + (k - 1) * wms)
    elif form == "2":
        num = bms - ems
        den = bms + (jms - ems) / n if average else bms + (k - 1) * ems + k * (jms - ems) / n
    elif form == "3":
        num, den = bms - ems, (bms if average else bms + (k - 1) * ems)
    else:
        raise ValueError(f"ICC form must be '1', '2' or '3', got {form!r}")
    if not np.isfinite(num) or not np.isfinite(den) or abs(den) < 1e-12:
        return None
    return float(num / den)


def icc_mcgraw_wong(
    ratings: Ratings, definition: Literal["A", "C"] = "A", average: bool = False
) -> float | None:
    """Return McGraw & Wong's ICC(A,1) / ICC(C,1), or (A,k) / (C,k) with ``average``.

    ``definition="A"`` (absolute agreement) uses the Shrout & Fleiss ICC(2,*) formula,
    ``"C"`` (consistency) the ICC(3,*) formula; the two-way model (random or mixed) does not
    change the number, only its interpretation.
    """
    if definition not in ("A", "C"):
        raise ValueError(
            f"ICC definition must be 'A' (absolute) or 'C' (consistency): {definition!r}"
        )
    return icc(ratings, "2" if definition == "A" else "3", average=average)


def _kappa(po: float, pe: float) -> float | None:
    return None if abs(1 - pe) < 1e-12 else float((po - pe) / (1 - pe))


def cohen_kappa(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float | None:
    """Return Cohen's (1960) unweighted kappa of two raters' labels (None: undefined)."""
    x = as_matrix(np.column_stack([np.asarray(a, dtype=float), np.asarray(b, dtype=float)]))
    labels = np.unique(x)
    po = float(np.mean(x[:, 0] == x[:, 1]))
    pe = float(sum(np.mean(x[:, 0] == c) * np.mean(x[:, 1] == c) for c in labels))
    return _kappa(po, pe)


def fleiss_kappa_counts(counts: Sequence[Sequence[float]] | np.ndarray) -> float | None:
    """Return Fleiss' (1971) kappa from an ``(n items, categories)`` table of rater counts."""
    c = np.asarray(counts, dtype=float)
    if c.ndim != 2 or c.shape[0] < 1:
        raise ValueError(f"counts must be (items x categories), got shape {c.shape}")
    m = c.sum(axis=1)
    if not np.all(m == m[0]) or m[0] < 2:
        raise ValueError("every item needs the same number (>= 2) of ratings")
    r = m[0]
    p_items = ((c * (c - 1)).sum(axis=1)) / (r * (r - 1))
    p_cat = c.sum(axis=0) / c.sum()
    return _kappa(float(p_items.mean()), float((p_cat**2).sum()))


def fleiss_kappa(ratings: Ratings) -> float | None:
    """Return Fleiss' kappa of an ``(n, k)`` matrix of categorical labels."""
    x = as_matrix(ratings)
    labels = np.unique(x)
    return fleiss_kappa_counts(np.stack([(x == v).sum(axis=1) for v in labels], axis=1))


def agreement_report(ratings: Ratings) -> dict[str, JSONValue]:
    """Return every agreement statistic of an ``(n, k)`` ratings matrix as a JSON-ready dict."""
    x = as_matrix(ratings)
    n, k = x.shape
    out: dict[str, JSONValue] = {
        "n_items": n,
        "n_raters": k,
        "percent_agreement": percent_agreement(x),
        "pairwise_agreement": pairwise_agreement(x),
        "icc_a1": icc_mcgraw_wong(x, "A"),
        "icc_ak": icc_mcgraw_wong(x, "A", average=True),
        "icc_c1": icc_mcgraw_wong(x, "C"),
        "icc_ck": icc_mcgraw_wong(x, "C", average=True),
        "icc1_1": icc(x, "1"),
        "fleiss_kappa": fleiss_kappa(x),
    }
    if k == 2:
        out["cohen_kappa"] = cohen_kappa(x[:, 0], x[:, 1])
    return out


def align_ratings(
    by_rater: Mapping[str, Mapping[str, float | None]],
) -> tuple[list[str], list[str], np.ndarray]:
    """Align ``{rater: {item_id: rating or None}}`` on the items every rater rated.

    Returns the rater names, the item ids (sorted) and the ``(n, k)`` matrix; items a rater left
    unrated (None or missing) are dropped, so every statistic compares the same items.
    """
    raters = list(by_rater)
    if len(raters) < 2:
        raise ValueError(f"agreement needs at least 2 raters, got {raters}")
    common = set.intersection(
        *({i for i, v in ratings.items() if v is not None} for ratings in by_rater.values())
    )
    items = sorted(common)
    rows = [[by_rater[r][i] for r in raters] for i in items]  # all rated: ``common``
    matrix = np.array([[float(v or 0.0) for v in row] for row in rows], dtype=float)
    return raters, items, matrix.reshape(len(items), len(raters))


def agreement_statistics(ratings: Ratings, clusters: Sequence[str]) -> dict[str, ClusterStatistic]:
    """Percent agreement and ICC(A,1) as functions of the episodes the items came from.

    ``clusters`` names each item's episode (CAIM: the user asked). Percent agreement is a mean
    (additive); the ICC is recomputed from the resampled episodes' rows (``metrics.bootstrap``).
    An undefined ICC in a resample (no variance) counts as 0.
    """
    from recallbench.metrics.bootstrap import Additive, Generic

    x = as_matrix(ratings)
    if len(clusters) != x.shape[0]:
        raise ValueError(f"{x.shape[0]} rated items but {len(clusters)} cluster ids")
    same = np.all(x == x[:, :1], axis=1).astype(float)
    ids = tuple(dict.fromkeys(clusters))
    rows = {c: np.flatnonzero(np.asarray(clusters) == c) for c in ids}

    def icc_a1(positions: np.ndarray) -> float:
        picked = (
            np.concatenate([rows[ids[i]] for i in positions])
            if len(positions)
            else np.array([], dtype=int)
        )
        value = icc(x[picked], "2") if len(picked) > 1 else None
        return 0.0 if value is None else value

    return {
        "percent_agreement": Additive.from_items(
            clusters, np.column_stack([same, np.ones_like(same)]), {"fn": "ratio"}
        ),
        "icc_a1": Generic(ids, icc_a1, resamples=1000),
    }
