"""How far each offline judge agrees with the source's own judge, on the same answers.

For a run whose file ships verdicts, each offline judge of the run (``j``: ``mem0_j``'s offline
twin, or the real prompt with an endpoint; ``j_lexical``) is compared item by item with the
majority of the shipped verdicts (``j_<source>_majority``): ``agree_<judge>`` (share of the
questions where both say the same; per item ``[same, 1]``) and ``kappa_<judge>`` (Cohen's
kappa of the pooled 2x2 table, ``metrics.estimators.kappa``), each pooled, per category and
``answerable``, with conversation-clustered 95% intervals (``metrics.bootstrap``). On the
wrong-by-construction files (the audit's ``ap-baseline``) a judge's acceptance ``j`` is its
false-accept rate, beside the source judge's own ``j_<source>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from recallbench.metrics.bootstrap import clustered_entry
from recallbench.payloads import answer_meta
from recallbench.records import JSON, Prediction
from recallbench.verdict import verdict_of

KAPPA = {"fn": "kappa"}
Row = tuple[str, int, list[float]]


def _credit(p: Prediction, judge: str) -> float | None:
    if p.kind != "answer":
        return None
    if judge == "j":
        verdict = verdict_of(p)
        return None if verdict is None else float(verdict.correct)
    value = answer_meta(p).get("judges", {}).get(judge.removeprefix("j_"))
    return None if value is None else float(value)


def _entry(rows: list[tuple[Row, list[str]]], spec: dict[str, JSON] | None) -> dict[str, JSON]:
    def one(group: list[Row]) -> dict[str, JSON]:
        if spec is None:
            return clustered_entry(group, per_session=False)
        return clustered_entry(group, spec, per_session=False)

    entry = one([r for r, _ in rows])
    subsets = sorted({s for _, subs in rows for s in subs})
    entry["subsets"] = {s: one([r for r, subs in rows if s in subs]) for s in subsets}
    return entry


def agreement_entries(
    predictions: Sequence[Prediction], source: str, judges: Sequence[str] = ("j", "j_lexical")
) -> dict[str, dict[str, JSON]]:
    """``agree_<judge>`` and ``kappa_<judge>`` against ``j_<source>_majority`` (none: no verdicts)."""
    out: dict[str, dict[str, Any]] = {}
    for judge in judges:
        same: list[tuple[Row, list[str]]] = []
        table: list[tuple[Row, list[str]]] = []
        for p in predictions:
            a, b = _credit(p, judge), _credit(p, f"j_{source}_majority")
            if a is None or b is None:
                continue
            subsets = [str(s) for s in p.meta.get("subsets") or ()]
            key = (p.episode_id, p.session_index)
            same.append(((*key, [float(a == b), 1.0]), subsets))
            cells = [a * b, a * (1 - b), (1 - a) * b, (1 - a) * (1 - b)]
            table.append(((*key, cells), subsets))
        if same:
            out[f"agree_{judge}"] = _entry(same, None)
            out[f"kappa_{judge}"] = _entry(table, KAPPA)
    return out
