"""What a run's summary holds: ``Summary``, the part every protocol's ``score`` returns.

A protocol's ``score`` returns a ``Summary`` (``protocols.base.EvalProtocol.score``): per metric
an entry (``MetricEntry``), and the failed calls the reference-based scorer left out
(``metrics.scoring``). A protocol that writes more keys declares them in its own ``TypedDict``
deriving from ``Summary`` beside its scoring (``protocols.base.JudgedSummary`` for the judged QA
protocols, ``protocols.locomo.LocomoSummary``, ``protocols.memory_ops.MemoryOpsSummary``...):
this layer names none of them. The runner adds its counts and the memory activity
(``run.read.RunSummary``) and writes the file; ``run.read`` is its one writer and reader.

    entry = summary["metrics"]["f1"]                 # a MetricEntry: value, n, ci95, per_session
    metric_entry(summary, "f1")                      # None: the run did not score it

A metric's entry (``MetricEntry``) is plain JSON whose keys ``metrics.scoring.score_predictions``
documents (``value``, ``n``, ``ci95``/``ci_note``, ``per_session``, ``session_mean``, ``mean``,
``subsets``, ``bootstrap``): the interval's key follows the bootstrap settings
(``metrics.bootstrap.Bootstrap.key``), so it is not a fixed name a TypedDict could list.
"""

from __future__ import annotations

from typing import Any, Required, TypedDict

__all__ = ["MetricEntry", "Summary", "metric_entry"]

# One metric's entry: value, n, the interval, per session, ... (see the module docstring).
# Still Any: its readers (tables.cells, analysis.frames, view.html) use the values as numbers
# directly; a typed entry comes with issue 47's run reader, which rewrites them.
MetricEntry = dict[str, Any]


class Summary(TypedDict, total=False):
    """What every protocol's ``score`` returns; a protocol's own keys are in its subclass."""

    metrics: Required[dict[str, MetricEntry]]
    failed_calls_not_scored: int  # reference metrics (``metrics.scoring``)


def metric_entry(summary: Summary, metric: str) -> MetricEntry | None:
    """The entry of ``metric`` in ``summary`` (None: the run did not score it)."""
    return summary["metrics"].get(metric)
