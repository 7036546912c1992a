"""Scores of the ``memory_ops`` protocol: set F1, pairwise accuracy, operation shares.

Summary entries (``summary["metrics"][name]``, read by the table cells): ``value``, ``n``,
``per_session`` (set metrics), ``ci95`` (episode-clustered bootstrap over transitions of an
episode; pairs are their own clusters) and, for pairwise accuracy, ``n_excluded`` with why.

- ``set_f1`` / ``set_precision`` / ``set_recall``: mean over transitions with pairs;
- ``set_f1_all``: mean F1 over every transition (M = {} included);
- ``pair_acc_<source>``: 4-class accuracy on the held-out pairs of a source;
- ``op_<op>``: ``value`` = share of pairs with that derived gold operation (Table 2 shape,
  ``derived: true``), ``predicted`` = share of pairs the classifier labelled so (Algorithm 1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from recallbench.metrics.summary import Summary
from recallbench.records import Prediction, Score
from recallbench.verdict import JSONValue

OPS = {"P": "pass", "R": "replace", "A": "append", "D": "delete"}
SOURCES = ("table7", "own_ko", "own_en")
METRICS = (
    "set_f1",
    "set_precision",
    "set_recall",
    "set_f1_all",
    *(f"pair_acc_{s}" for s in SOURCES),
    *(f"op_{o}" for o in OPS.values()),
)


class MemoryOpsSummary(Summary, total=False):
    """A ``memory_ops`` run's summary: ``Summary``, its transitions and pairs, and the fits."""

    n_transitions: int
    n_transitions_with_pairs: int
    n_pairs: int
    fit: str  # how the thresholds were fitted ("cv", ...)
    fits: list[dict[str, JSONValue]]  # the per-fold fits


def _entry(rows: Sequence[tuple[str, int, float]], per_session: bool = True) -> dict[str, Any]:
    """Mean of (cluster, session, value) rows with its clustered interval and sessions."""
    from recallbench.metrics.bootstrap import clustered_entry

    return clustered_entry([(c, s, [v, 1.0]) for c, s, v in rows], per_session=per_session)


def score_memory_ops(predictions: Sequence[Prediction]) -> tuple[list[Score], MemoryOpsSummary]:
    """Return per-item scores and the summary of a ``memory_ops`` run."""
    sets = [p for p in predictions if p.kind == "memory_set"]
    pairs = [p for p in predictions if p.kind == "memory_pair"]
    scores: list[Score] = []
    metrics: dict[str, Any] = {}

    def rows(keep: Callable[[Prediction], bool], field: str) -> list[tuple[str, int, float]]:
        return [(p.episode_id, p.session_index, float(p.meta[field])) for p in sets if keep(p)]

    with_pairs = lambda p: bool(p.meta["has_pairs"])  # noqa: E731
    for name, keep, field in (
        ("set_f1", with_pairs, "f1"),
        ("set_precision", with_pairs, "precision"),
        ("set_recall", with_pairs, "recall"),
        ("set_f1_all", lambda p: True, "f1"),
    ):
        metrics[name] = _entry(rows(keep, field))
    scores += [Score(p.pred_id, "set_f1", float(p.meta["f1"])) for p in sets]

    for source in sorted({p.meta["source"] for p in pairs}):
        mine = [p for p in pairs if p.meta["source"] == source]
        test = [p for p in mine if p.meta.get("excluded") is None]
        excluded = sorted({str(p.meta["excluded"]) for p in mine if p.meta.get("excluded")})
        name = f"pair_acc_{source}"
        items = [(p.pred_id, 0, float(p.output == p.reference)) for p in test]
        scores += [Score(pid, name, v) for pid, _, v in items]
        if items:
            metrics[name] = _entry(items, per_session=False)
        else:
            metrics[name] = {"value": None, "n": 0}
        metrics[name].update(n_excluded=len(mine) - len(test), excluded_because=excluded)
        if not items:
            del metrics[name]["value"]  # nothing held out: no value (the table shows n/a)

    derived = [(p, op) for p in sets for op in p.meta["derived_ops"]]
    predicted = [op for p in sets for op in p.meta["ops"]]
    for op, label in OPS.items():
        items = [(p.episode_id, p.session_index, float(o == op)) for p, o in derived]
        metrics[f"op_{label}"] = {
            **_entry(items, per_session=False),
            "derived": True,
            "predicted": sum(o == op for o in predicted) / len(predicted) if predicted else 0.0,
        }
    summary: MemoryOpsSummary = {
        "metrics": metrics,
        "n_transitions": len(sets),
        "n_transitions_with_pairs": sum(1 for p in sets if p.meta["has_pairs"]),
        "n_pairs": len(derived),
    }
    return scores, summary
