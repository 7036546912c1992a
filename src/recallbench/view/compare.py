"""Two runs item by item: the same prediction id in both, ordered by how much they differ.

Pairs are ordered by the absolute difference of one per-item metric (``metric``; default the
first metric both runs score per item), largest first; pairs without that score follow, those
whose outputs differ before those whose outputs are equal; predictions present in one run only
come last. ``delta`` is B minus A.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from recallbench.errors import ConfigError
from recallbench.metrics.summary import Summary
from recallbench.view.load import RunFiles
from recallbench.view.timeline import Entry, entry_for, turn_anchor


@dataclass
class Pair:
    """One prediction id in run A and run B."""

    pred_id: str
    a: Entry | None
    b: Entry | None
    delta: float | None  # B - A on the comparison metric

    @property
    def differs(self) -> bool:
        """Whether the two outputs differ (or only one run has the item)."""
        if self.a is None or self.b is None:
            return True
        return self.a.pred.output != self.b.pred.output

    @property
    def reference(self) -> str | None:
        entry = self.a or self.b
        return entry.pred.reference if entry is not None else None


@dataclass
class Comparison:
    a: RunFiles
    b: RunFiles
    metric: str | None
    pairs: list[Pair]
    metrics: list[tuple[str, Any, Any]]  # (metric, A's whole-run value, B's)

    @property
    def counts(self) -> dict[str, int]:
        both = [p for p in self.pairs if p.a is not None and p.b is not None]
        return {
            "paired": len(both),
            "same output": sum(not p.differs for p in both),
            "B better": sum(p.delta is not None and p.delta > 0 for p in both),
            "A better": sum(p.delta is not None and p.delta < 0 for p in both),
            "only in A": sum(p.b is None for p in self.pairs),
            "only in B": sum(p.a is None for p in self.pairs),
        }


def _entries(run: RunFiles) -> dict[str, Entry]:
    turns = frozenset(t.turn_id for e in run.episodes.values() for t in e.turns())
    known = turns if run.episodes else None
    return {
        p.pred_id: entry_for(run, p, turn_anchor(p, known) is not None)
        for p in run.predictions
        if p.kind != "timing"
    }


def pick_metric(a: RunFiles, b: RunFiles, metric: str | None) -> str | None:
    """The metric pairs are ordered by: ``metric`` when both runs score it per item."""
    shared = [m for m in a.item_metrics() if m in set(b.item_metrics())]
    if metric is None:
        return shared[0] if shared else None
    if metric not in shared:
        raise ConfigError(
            f"--metric {metric}: not scored per item in both runs (both have: "
            f"{', '.join(shared) or 'none'})"
        )
    return metric


def _order(pair: Pair) -> tuple[bool, bool, float, bool, str]:
    unmatched = pair.a is None or pair.b is None
    return (unmatched, pair.delta is None, -abs(pair.delta or 0.0), not pair.differs, pair.pred_id)


def compare_runs(a: RunFiles, b: RunFiles, metric: str | None = None) -> Comparison:
    """Pair the predictions of ``a`` and ``b`` by id, the largest difference first."""
    chosen = pick_metric(a, b, metric)
    left, right = _entries(a), _entries(b)
    pairs = []
    for pred_id in dict.fromkeys([*left, *right]):
        ea, eb = left.get(pred_id), right.get(pred_id)
        va = ea.scores.get(chosen) if ea is not None and chosen else None
        vb = eb.scores.get(chosen) if eb is not None and chosen else None
        delta = vb - va if va is not None and vb is not None else None
        pairs.append(Pair(pred_id, ea, eb, delta))
    pairs.sort(key=_order)
    names = list(dict.fromkeys([*a.summary.get("metrics", {}), *b.summary.get("metrics", {})]))
    metrics = [(m, _value(a.summary, m), _value(b.summary, m)) for m in names]
    return Comparison(a, b, chosen, pairs, metrics)


def _value(summary: Summary, metric: str) -> Any:
    entry = summary.get("metrics", {}).get(metric)
    return entry.get("value") if isinstance(entry, dict) else None
