"""Reference-based scoring of predictions: the runner's default when a protocol has no ``score``.

Lives below ``runner`` and ``protocols`` so that a protocol that adds its own measures to the
reference metrics (``protocols.timerag``) can call it without importing the runner.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from recallbench.llm.task import CALL_FAILURE
from recallbench.metrics.summary import Summary
from recallbench.records import Prediction, Score

# A metric whose value is a mean over seeds (MAUVE's k-means) reports each seed's value under
# this meta key; summaries keep it beside every value so a table can show the seeds' spread.
SEEDS = "seed_values"

if TYPE_CHECKING:
    from recallbench.metrics.base import Metric, MetricResult
    from recallbench.metrics.clusters import ClusterStatistic


def score_predictions(
    predictions: Sequence[Prediction], metric_names: Sequence[str]
) -> tuple[list[Score], Summary]:
    """Score predictions with reference-based metrics, overall and per session.

    ``summary[metric]`` holds ``value`` (the metric's corpus value over all predictions),
    ``session_mean`` (mean of the per-session corpus values: THEANINE's "average of sessions"),
    ``mean`` over per-item values when the metric defines them, and ``per_session``. Every value
    has an episode-clustered bootstrap interval (``metrics.bootstrap``): ``ci95`` (of ``value``),
    ``session_mean_ci95``, ``per_session[s].ci95``, with ``ci_method``, ``n_resamples``, ``seed``
    and ``n_clusters`` (episodes); additive metrics keep their per-episode sums (``bootstrap``).
    Predictions whose LLM call failed (``failure`` starts with ``CALL_FAILURE``) are left out and
    counted in ``failed_calls_not_scored``. Predictions that name subsets (``meta["subsets"]``,
    e.g. CareCall's memory turns) are also scored per subset: ``summary[metric]["subsets"][name]``,
    an entry like the metric's own (``value``, ``n``, ``ci95``, ``per_session``, the per-episode
    sums under ``bootstrap``, so a table can test a subset's cells). Metrics that condition on a
    context (``uses_contexts``, e.g. perplexity) get each prediction's ``meta["context"]`` when
    the protocol stored it.
    """
    from recallbench.metrics import get_metric

    with_reference = [p for p in predictions if p.reference is not None]
    # A failed call's output is the task's fallback, not an answer: never scored as one.
    scored = [p for p in with_reference if not (p.failure or "").startswith(CALL_FAILURE)]
    subsets = sorted({str(s) for p in scored for s in p.meta.get("subsets") or ()})
    scores: list[Score] = []
    summary: Summary = {
        "metrics": {},
        "failed_calls_not_scored": len(with_reference) - len(scored),
    }
    for name in metric_names:
        metric = get_metric(name)
        entry, res = _entry(metric, scored, full=True)
        if res.items is not None:
            scores.extend(Score(p.pred_id, name, v) for p, v in zip(scored, res.items, strict=True))
            entry["mean"] = sum(res.items) / len(res.items) if res.items else 0.0
        if subsets:
            entry["subsets"] = {
                # full: a subset keeps its per-episode sums too, so its cells can be tested
                sub: _entry(
                    metric, [p for p in scored if sub in (p.meta.get("subsets") or ())], True
                )[0]
                for sub in subsets
            }
        summary["metrics"][name] = entry
    return scores, summary


def _entry(
    metric: Metric, preds: Sequence[Prediction], full: bool = False
) -> tuple[dict[str, Any], MetricResult]:
    """A metric's summary entry over ``preds``: value, n, interval, per session (+ mean)."""
    from recallbench.metrics.bootstrap import MeanOf, ci_fields

    by_session: dict[int, list[Prediction]] = defaultdict(list)
    for p in preds:
        by_session[p.session_index].append(p)
    res, stat = _compute(metric, preds)
    keep = metric.bootstrap_serializable and full
    entry: dict[str, Any] = {"value": res.value, "n": len(preds), "meta": res.meta}
    entry.update(ci_fields(stat, reason=metric.bootstrap_note, keep=keep, full=full))
    per_session: dict[str, dict[str, Any]] = {}  # entries as the summary holds them
    parts = []
    for index, group in sorted(by_session.items()):
        r, part = _compute(metric, group)
        per_session[str(index)] = {"value": r.value, "n": len(group)}
        per_session[str(index)].update(
            ci_fields(part, reason=metric.bootstrap_note, full=False, keep=keep)
        )
        if SEEDS in r.meta:  # a value averaged over seeds keeps each seed's (metrics.mauve)
            per_session[str(index)][SEEDS] = r.meta[SEEDS]
        parts.append(part)
    entry["per_session"] = per_session
    values = [v["value"] for v in per_session.values()]
    entry["session_mean"] = sum(values) / len(values) if values else 0.0
    if SEEDS in res.meta:
        entry[SEEDS] = res.meta[SEEDS]
        if values:  # seed k's session mean is the mean of the sessions' seed-k values
            by_seed = zip(*(v[SEEDS] for v in per_session.values()), strict=True)
            entry[f"session_mean_{SEEDS}"] = [sum(k) / len(values) for k in by_seed]
    present = [p for p in parts if p is not None]
    mean_of = MeanOf.of(present) if parts and len(present) == len(parts) else None
    ci = ci_fields(mean_of, reason=metric.bootstrap_note, full=False, keep=False)
    entry["session_mean_ci95"] = ci.get("ci95")
    return entry, res


def _compute(
    metric: Metric, preds: Sequence[Prediction]
) -> tuple[MetricResult, ClusterStatistic | None]:
    """Return the metric's result on ``preds`` and its value as a function of the episodes."""
    # every prediction here has a reference (``score_predictions`` keeps only those)
    from recallbench.metrics.cache import cached_compute

    outputs, references = [p.output for p in preds], [p.reference or "" for p in preds]
    contexts = [p.meta.get("context") for p in preds] if metric.uses_contexts else None
    if contexts is not None and all(c is None for c in contexts):
        contexts = None
    res = cached_compute(metric, outputs, references, contexts)  # a lookup when computed before
    stat = metric.clustered(res, outputs, references, [p.episode_id for p in preds])
    return res, stat
