"""Reported values as functions of summed sufficient statistics (the bootstrap's building block).

Every value the harness reports that can be written as ``f(sum over items of s_item)`` is an
*estimator* here: ``s_item`` is a short vector of additive statistics per item, and the value of
any set of items (a run, a session, a bootstrap resample of episodes) is ``f`` of their sum. That
makes episode resampling exact and cheap: sum each episode's vectors once, then every resample is
a weighted sum of episode rows.

| name | statistics per item (columns) | value |
|---|---|---|
| ``ratio`` | ``[x, w]`` | sum x / sum w (a mean; 0 when sum w = 0) |
| ``total`` | ``[x]`` | sum x (e.g. CAIM Table 4 entries summed over users) |
| ``bleu`` | sacrebleu segment stats ``[sys_len, ref_len, correct_1..N, total_1..N]`` | corpus BLEU / 100, sacrebleu's own formula (``BLEU.compute_bleu``, smoothing "exp") |
| ``capped_exp`` | ``[nll, tokens]`` | exp(sum nll / sum tokens), capped (token-weighted perplexity) |
| ``prf`` | ``[correct, incorrect, dont_know]`` | LUFY precision / recall / F1 / don't-know rate of the pooled counts |
| ``prf_groups`` | k triples ``[c, i, d]`` | LUFY per-session value: mean over the k question-sessions of P and R, F1 from those means |
| ``set_prf`` | ``[matched, predicted, gold]`` | pooled set precision matched/predicted, recall matched/gold, or their F1 (TimeRAG writing) |
| ``ratio_groups`` | g pairs ``[x_1, w_1, ..., x_g, w_g]`` | mean over the groups with sum w > 0 of sum x / sum w (LongMemEval's task-averaged accuracy: the mean of the per-type accuracies) |
| ``kappa`` | ``[a1b1, a1b0, a0b1, a0b0]`` (two raters' binary labels of an item) | Cohen's kappa of the pooled 2x2 table (0 when undefined: both raters constant) |
| ``mauve`` | ``[p counts per bucket, q counts per bucket]`` per k-means seed | MAUVE of the two histograms (``frontier_area``, tie-robust: ``metrics.mauve``), the mean over the seeds' blocks |

A spec is a JSON-ready mapping ``{"fn": name, **params}`` (``{"fn": "bleu", "max_order": 4}``), so a
run's ``summary.json`` can carry per-episode statistics that a table recomputes any value, CI or
paired test from. Estimators take ``(..., d)`` arrays and return ``(...)`` arrays.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np

from recallbench.errors import did_you_mean

Spec = Mapping[str, str | int | float | None]


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out


def ratio(s: np.ndarray) -> np.ndarray:
    """Sum of column 0 over sum of column 1 (0 when the denominator is 0)."""
    return _safe_div(s[..., 0], s[..., 1])


def total(s: np.ndarray) -> np.ndarray:
    """Sum of column 0."""
    return np.asarray(s[..., 0], dtype=float)


def _rows(s: np.ndarray, fn: Callable[[np.ndarray], float]) -> np.ndarray:
    flat = np.asarray(s, dtype=float).reshape(-1, s.shape[-1])
    return np.array([fn(row) for row in flat], dtype=float).reshape(s.shape[:-1])


def bleu(s: np.ndarray, max_order: int = 4) -> np.ndarray:
    """Corpus BLEU on a 0-1 scale from summed sacrebleu segment statistics."""
    from sacrebleu.metrics import BLEU

    def one(row: np.ndarray) -> float:
        counts = [int(round(v)) for v in row]
        score = BLEU.compute_bleu(
            correct=counts[2 : 2 + max_order],
            total=counts[2 + max_order : 2 + 2 * max_order],
            sys_len=counts[0],
            ref_len=counts[1],
            smooth_method="exp",
            max_ngram_order=max_order,
        ).score
        return min(1.0, max(0.0, score / 100))  # sacrebleu gives 100.00000000000004 at best

    return _rows(s, one)


def capped_exp(s: np.ndarray, cap: float | None = None) -> np.ndarray:
    """exp(nll / tokens) capped at ``cap``; 0 when no token was scored."""
    mean_nll = np.minimum(_safe_div(s[..., 0], s[..., 1]), 700.0)
    value = np.where(s[..., 1] > 0, np.exp(mean_nll), 0.0)
    return np.minimum(value, cap) if cap is not None else value


def _prf(c: np.ndarray, i: np.ndarray, d: np.ndarray) -> dict[str, np.ndarray]:
    p, r = _safe_div(c, c + i), _safe_div(c, c + i + d)
    return {"precision": p, "recall": r, "f1": _safe_div(2 * p * r, p + r)}


def prf(s: np.ndarray, which: str) -> np.ndarray:
    """LUFY precision c/(c+i), recall c/(c+i+d), F1, or don't-know rate d/(c+i+d)."""
    c, i, d = s[..., 0], s[..., 1], s[..., 2]
    if which == "dont_know_rate":
        return _safe_div(d, c + i + d)
    return _prf(c, i, d)[which]


def prf_groups(s: np.ndarray, which: str) -> np.ndarray:
    """LUFY Table 11 cell: P and R averaged over question-sessions that asked something."""
    g = np.asarray(s, dtype=float).reshape(*s.shape[:-1], -1, 3)
    c, i, d = g[..., 0], g[..., 1], g[..., 2]
    if which == "dont_know_rate":
        return _safe_div(d.sum(-1), (c + i + d).sum(-1))
    asked = (c + i + d) > 0
    k = asked.sum(-1)
    groups = _prf(c, i, d)
    p = _safe_div(np.where(asked, groups["precision"], 0).sum(-1), k)
    r = _safe_div(np.where(asked, groups["recall"], 0).sum(-1), k)
    return {"precision": p, "recall": r, "f1": _safe_div(2 * p * r, p + r)}[which]


def set_prf(s: np.ndarray, which: str) -> np.ndarray:
    """Pooled set precision m/p, recall m/g or F1 of ``[matched, predicted, gold]`` sums."""
    m, pred, gold = s[..., 0], s[..., 1], s[..., 2]
    p, r = _safe_div(m, pred), _safe_div(m, gold)
    return {"precision": p, "recall": r, "f1": _safe_div(2 * p * r, p + r)}[which]


CURVE_POINTS = 25  # mauve-text's divergence_curve_discretization_size
SCALING = 5.0  # mauve-text's mauve_scaling_factor


def frontier_area(p_hist: np.ndarray, q_hist: np.ndarray) -> float:
    """Return MAUVE (area under the divergence frontier) of two histograms, robust to ties."""
    from mauve.compute_mauve import get_divergence_curve_for_multinomials
    from sklearn.metrics import auc

    weights = np.linspace(1e-6, 1 - 1e-6, CURVE_POINTS)
    curve = get_divergence_curve_for_multinomials(p_hist, q_hist, weights, SCALING)
    x, y = np.minimum(curve, 1.0).T
    # The frontier falls as x grows: equal x -> larger y first (and symmetrically for y).
    by_x, by_y = np.lexsort((-y, x)), np.lexsort((-x, y))
    return float(0.5 * (auc(x[by_x], y[by_x]) + auc(y[by_y], x[by_y])))


def _mauve_one(row: np.ndarray, buckets: int) -> float:
    p, q = row[:buckets], row[buckets : 2 * buckets]
    if p.sum() <= 0 or q.sum() <= 0:
        return 0.0
    return min(1.0, max(0.0, frontier_area(p / p.sum(), q / q.sum())))


def seed_values(s: np.ndarray, buckets: int, seeds: int = 1) -> np.ndarray:
    """MAUVE of each k-means seed's block of ``2 * buckets`` columns: shape ``(..., seeds)``."""
    blocks = np.asarray(s, dtype=float).reshape(*np.shape(s)[:-1], seeds, 2 * buckets)
    return _rows(blocks, lambda row: _mauve_one(row, buckets))


def mauve(s: np.ndarray, buckets: int, seeds: int = 1) -> np.ndarray:
    """MAUVE of the p (first ``buckets`` columns) and q histograms, averaged over ``seeds``
    blocks of ``2 * buckets`` columns (one per k-means seed); 0 if either is empty."""
    return np.asarray(seed_values(s, buckets, seeds).mean(axis=-1))


def kappa(s: np.ndarray) -> np.ndarray:
    """Cohen's (1960) kappa of the pooled 2x2 table ``[a1b1, a1b0, a0b1, a0b0]`` (0: undefined)."""
    s = np.asarray(s, dtype=float)
    n = s.sum(axis=-1)
    po = _safe_div(s[..., 0] + s[..., 3], n)
    a1, b1 = _safe_div(s[..., 0] + s[..., 1], n), _safe_div(s[..., 0] + s[..., 2], n)
    pe = a1 * b1 + (1 - a1) * (1 - b1)
    return np.where(n > 0, _safe_div(po - pe, 1 - pe), 0.0)


def ratio_groups(s: np.ndarray) -> np.ndarray:
    """Mean over column pairs ``(x_g, w_g)`` of x_g / w_g, over the groups with w_g > 0 (0: none)."""
    s = np.asarray(s, dtype=float)
    x, w = s[..., 0::2], s[..., 1::2]
    seen = w > 0
    shares = _safe_div(x, w)
    count = seen.sum(axis=-1)
    return _safe_div(np.where(seen, shares, 0.0).sum(axis=-1), count)


ESTIMATORS: dict[str, Callable[..., np.ndarray]] = {
    "ratio_groups": ratio_groups,
    "kappa": kappa,
    "ratio": ratio,
    "total": total,
    "bleu": bleu,
    "capped_exp": capped_exp,
    "prf": prf,
    "prf_groups": prf_groups,
    "set_prf": set_prf,
    "mauve": mauve,
}


def estimate(spec: Spec, sums: np.ndarray) -> np.ndarray:
    """Apply the estimator ``spec`` (``{"fn": name, **params}``) to summed statistics."""
    params = dict(spec)
    name = params.pop("fn", None)
    if name not in ESTIMATORS:
        raise did_you_mean("estimator", str(name), ESTIMATORS)
    return ESTIMATORS[str(name)](np.asarray(sums, dtype=float), **params)


def estimate_one(spec: Spec, sums: np.ndarray | list[float]) -> float:
    """Return the estimate of one summed statistics vector as a float."""
    value = float(estimate(spec, np.asarray(sums, dtype=float)))
    return value if math.isfinite(value) else 0.0
