"""Statistics of imported ratings: standardized scores, unit means, tests, votes, agreement.

- ``standardize``: each annotator's ratings of a criterion as z-scores over that annotator's
  ratings (CareCall sec. 5.3: "The score distribution of each crowdworker is standardized,
  removing the potential bias of each worker"); an annotator with one rating or no spread gets 0.
- ``unit_scores``: one number per (unit, system): the mean over its annotators.
- ``summary``: the mean of unit scores with its t interval (``metrics.stats.mean_ci``).
- ``paired``: a paired t-test of two systems over the units both have (``metrics.stats``).
- ``pearson``: Pearson's r between two criteria over the rated (unit, system) pairs (scipy).
- ``majority``: the label most annotators chose per (unit, system); a tie gives ``tie``
  (THEANINE App. E.2: "we report the results based on the majority rule").
- ``agreement``: the (items x annotators) matrix of one criterion, aligned on the items every
  annotator rated (``metrics.agreement.align_ratings``), and its ``agreement_report`` (ICC
  forms, percent agreement, Fleiss' kappa); categorical choices are coded by their position.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from recallbench.humaneval._sheet import Rating, Study
from recallbench.metrics.agreement import agreement_report, align_ratings
from recallbench.metrics.stats import MeanCI, TTest, mean_ci, paired_ttest
from recallbench.records import JSON

__all__ = [
    "agreement",
    "majority",
    "paired",
    "pearson",
    "standardize",
    "summary",
    "unit_scores",
]

Key = tuple[str, str]  # (unit, system)


def standardize(ratings: Sequence[Rating]) -> list[Rating]:
    """The ratings with each (annotator, criterion)'s values as z-scores (population sd)."""
    groups: dict[tuple[str, str], list[float]] = {}
    for r in ratings:
        groups.setdefault((r.annotator, r.criterion), []).append(float(r.value))
    stats = {k: (float(np.mean(v)), float(np.std(v))) for k, v in groups.items()}
    out = []
    for r in ratings:
        mean, sd = stats[r.annotator, r.criterion]
        out.append(r._replace(value=(float(r.value) - mean) / sd if sd > 0 else 0.0))
    return out


def unit_scores(
    ratings: Sequence[Rating], criterion: str, where: Callable[[Rating], bool] | None = None
) -> dict[Key, float]:
    """``{(unit, system): mean over annotators}`` of a numeric criterion."""
    values: dict[Key, list[float]] = {}
    for r in ratings:
        if r.criterion == criterion and (where is None or where(r)):
            values.setdefault((r.unit, r.system), []).append(float(r.value))
    return {k: float(np.mean(v)) for k, v in values.items()}


def summary(scores: dict[Key, float], system: str) -> tuple[MeanCI, int]:
    """The mean of ``system``'s unit scores with its 95% t interval, and the number of units."""
    values = [v for (_, s), v in scores.items() if s == system]
    return mean_ci(values), len(values)


def paired(scores: dict[Key, float], a: str, b: str) -> TTest:
    """Paired t-test of systems ``a`` vs ``b`` over the units both were rated on."""
    units = sorted({u for u, s in scores if s == a} & {u for u, s in scores if s == b})
    return paired_ttest([scores[u, a] for u in units], [scores[u, b] for u in units])


def pearson(x: dict[Key, float], y: dict[Key, float]) -> tuple[float | None, float | None, int]:
    """Pearson's (r, p, n) over the keys both have; (None, None, n) when undefined."""
    from scipy import stats as st

    keys = sorted(x.keys() & y.keys())
    a, b = np.array([x[k] for k in keys]), np.array([y[k] for k in keys])
    if len(keys) < 3 or a.std() == 0 or b.std() == 0:
        return None, None, len(keys)
    result = st.pearsonr(a, b)
    r, p = float(result.statistic), float(result.pvalue)
    return (r, p, len(keys)) if math.isfinite(r) else (None, None, len(keys))


def majority(ratings: Sequence[Rating], criterion: str, tie: str) -> dict[Key, str]:
    """``{(unit, system): the label most annotators gave}``; several labels tied -> ``tie``."""
    votes: dict[Key, Counter[str]] = {}
    for r in ratings:
        if r.criterion == criterion:
            votes.setdefault((r.unit, r.system), Counter())[str(r.value)] += 1
    out = {}
    for key, counter in votes.items():
        (top, n), *rest = counter.most_common()
        out[key] = tie if rest and rest[0][1] == n else top
    return out


def agreement(study: Study, ratings: Sequence[Rating], criterion: str) -> dict[str, JSON] | None:
    """The agreement report of one criterion over the items every annotator rated; None with
    fewer than two annotators or no shared item."""
    crit = study.criterion(criterion)
    by: dict[str, dict[str, float]] = {}
    for r in ratings:
        if r.criterion == criterion:
            value = crit.choices.index(r.value) if crit.choices else float(r.value)
            by.setdefault(r.annotator, {})[r.item] = float(value)
    if len(by) < 2:
        return None
    raters, items, matrix = align_ratings(by)
    if len(items) < 2:
        return None
    return {"raters": raters, **agreement_report(matrix)}
