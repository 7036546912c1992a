"""The panel's statistics: acceptance per probe, the headline metric, agreement, spread.

- Acceptance of a judge on a set of answers (a probe, or the run's own answers): the mean
  credit (1 accepted, 0 not, 0.5 CAIM's partial credit), with the 95% episode-clustered
  bootstrap interval (``metrics.bootstrap``: every question of an episode is about one user,
  and LUFY asks each question after every session).
- The headline metric on the run's own answers, LUFY's definitions (``protocols.qa.scores``):
  precision = credit / answered, recall = credit / asked (= the acceptance, the accuracy), F1;
  an answer is unanswered when the judge labels it don't-know, or, for a judge without that
  label, when it gets no credit and ``judges.lexical.is_dont_know`` calls it a don't-know.
- Agreement between judges on the items all of them scored (``metrics.agreement``): percent
  agreement (all identical), pairwise agreement, Fleiss' kappa, ICC(A,1) over credits, and
  Cohen's kappa per pair of judges. Undefined values (no variance) are None.
- Spread of a value across judges: min, max, their difference and the standard deviation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations

import numpy as np

from recallbench.judges.lexical import is_dont_know
from recallbench.metrics.agreement import agreement_report, align_ratings, cohen_kappa
from recallbench.metrics.bootstrap import RATIO, Additive, ci_fields
from recallbench.verdict import JSONValue, Verdict

HEADLINE_METRICS = ("precision", "recall", "f1")
# the headline metric of each protocol's paper (recall = accuracy = mean credit)
HEADLINE = {
    "qa": "f1",
    "qa_gvd": "recall",
    "teafarm": "recall",
    "locomo_qa": "recall",  # Mem0's J: the share of answers judged CORRECT
    "locomo_import": "recall",
}

Row = tuple[str, float]  # (episode id, credit)


def _interval(stat: Additive) -> dict[str, JSONValue]:
    fields = ci_fields(stat, full=False, keep=False)
    return {"ci95": fields.get("ci95"), "n_clusters": fields.get("n_clusters")}


def acceptance(rows: Sequence[Row]) -> dict[str, JSONValue]:
    """Mean credit of ``rows`` with its episode-clustered 95% interval (value None: no rows)."""
    if not rows:
        return {"value": None, "n": 0, "ci95": None, "n_clusters": 0}
    stat = Additive.from_items([e for e, _ in rows], [[c, 1.0] for _, c in rows], RATIO)
    return {"value": stat.value(), "n": len(rows), **_interval(stat)}


def unanswered(verdict: Verdict, has_dont_know: bool, answer: str) -> bool:
    """Whether the headline metric counts ``answer`` as unanswered (module docstring).

    ``has_dont_know``: whether the verdict's judge can say don't-know at all
    (``judgepanel.judges.PanelJudge``).
    """
    if has_dont_know:
        return verdict.dont_know
    return verdict.credit == 0 and is_dont_know(answer)


def headline(rows: Sequence[tuple[str, float, bool]]) -> dict[str, dict[str, JSONValue]]:
    """LUFY precision / recall / F1 of ``(episode, credit, unanswered)`` rows, with intervals."""
    if not rows:
        return {m: {"value": None, "n": 0, "ci95": None} for m in HEADLINE_METRICS}
    table = [[c, 0.0 if dk else 1.0 - c, 1.0 if dk else 0.0] for _, c, dk in rows]
    out: dict[str, dict[str, JSONValue]] = {}
    for metric in HEADLINE_METRICS:
        stat = Additive.from_items([e for e, _, _ in rows], table, {"fn": "prf", "which": metric})
        out[metric] = {"value": stat.value(), "n": len(rows), **_interval(stat)}
    return out


def agreement(
    ratings: Mapping[str, Mapping[str, float | None]],
) -> dict[str, JSONValue] | None:
    """Agreement statistics of ``{judge: {item: credit or None}}`` on the common items.

    None with fewer than 2 judges that scored anything, or no item all of them scored.
    """
    scored = {j: r for j, r in ratings.items() if any(v is not None for v in r.values())}
    if len(scored) < 2:
        return None
    judges, items, matrix = align_ratings(scored)
    if not items:
        return None
    report = agreement_report(matrix)
    report["judges"] = [*judges]
    report["pairs"] = [
        {
            "a": judges[a],
            "b": judges[b],
            "agreement": float(np.mean(matrix[:, a] == matrix[:, b])),
            "cohen_kappa": cohen_kappa(matrix[:, a], matrix[:, b]),
        }
        for a, b in combinations(range(len(judges)), 2)
    ]
    return report


def spread(values: Mapping[str, float | None]) -> dict[str, float | str | int] | None:
    """Min, max, range and standard deviation of the available values (None: fewer than 2)."""
    known = {k: v for k, v in values.items() if v is not None}
    if len(known) < 2:
        return None
    lo = min(known, key=lambda k: known[k])
    hi = max(known, key=lambda k: known[k])
    return {
        "min": known[lo],
        "max": known[hi],
        "range": known[hi] - known[lo],
        "sd": float(np.std(list(known.values()), ddof=1)),
        "min_judge": lo,
        "max_judge": hi,
        "n_judges": len(known),
    }
