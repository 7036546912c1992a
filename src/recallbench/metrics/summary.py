"""``summary.json``: what a run's summary holds, and the one module that reads and writes it.

A protocol's ``score`` returns a ``Summary`` (``protocols.base.EvalProtocol.score``); the runner
adds the episode and prediction counts and the memory activity (``metrics.activity``), writes it
with ``write_summary`` and returns it (``run.runner.Runner.run``); tables, the analysis frames,
the viewer and the reports read it back with ``read_summary``. The format on disk is the one
every committed run folder has: this module gives it a type, it does not change it.

    summary = read_summary(run_dir)                  # DatasetFormatError naming the file if unusable
    entry = summary["metrics"]["f1"]                 # a MetricEntry: value, n, ci95, per_session
    write_summary(run_dir, summary)                  # atomic, allow_nan=False

``Summary`` names every top-level key a protocol writes; a metric's entry (``MetricEntry``) is
plain JSON whose keys ``metrics.scoring.score_predictions`` documents (``value``, ``n``,
``ci95``/``ci_note``, ``per_session``, ``session_mean``, ``mean``, ``subsets``, ``bootstrap``):
the interval's key follows the bootstrap settings (``metrics.bootstrap.Bootstrap.key``), so it
is not a fixed name a TypedDict could list.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Required, TypedDict, cast

from recallbench.errors import DatasetFormatError
from recallbench.io import write_json
from recallbench.verdict import JSONValue

__all__ = [
    "SUMMARY_FILE",
    "MetricEntry",
    "Summary",
    "has_summary",
    "metric_entry",
    "read_summary",
    "summary_path",
    "write_summary",
]

SUMMARY_FILE = "summary.json"

# One metric's entry: value, n, the interval, per session, ... (see the module docstring).
# Still Any: its readers (tables.cells, analysis.frames, view.html) use the values as numbers
# directly; a typed entry comes with issue 47's run reader, which rewrites them.
MetricEntry = dict[str, Any]


class Summary(TypedDict, total=False):
    """A run's ``summary.json``. Only ``metrics`` is in every summary; the rest are written by
    the runner (counts, ``memory``) or by the protocols that have them (named per key)."""

    metrics: Required[dict[str, MetricEntry]]
    n_episodes: int  # the runner
    n_predictions: int  # the runner
    memory: dict[str, JSONValue]  # the runner: ``metrics.activity`` (totals, per_session, method)
    failed_calls_not_scored: int  # reference metrics (``metrics.scoring``), qa, locomo
    answer_failures: int  # qa, locomo
    aggregation: str  # qa, locomo: how per-session and pooled values are formed
    judge: dict[str, JSONValue]  # qa, locomo: the judge's description and its failure counts
    judge_usage: dict[str, JSONValue]  # qa, locomo: a judge with its own LLM (``Usage.to_dict``)
    errata_items: int  # locomo: answers corrected by the errata
    latency: dict[str, JSONValue]  # locomo: p50/p95 seconds per timed stage (``protocols.locomo``)
    errata: dict[str, JSONValue]  # locomo under errata: sources, counts, conflicts
    caim_judge: dict[str, JSONValue]  # qa_gvd: CAIM's rubric judge
    fit: str  # memory_ops: how the thresholds were fitted ("cv", ...)
    fits: list[dict[str, JSONValue]]  # memory_ops: the per-fold fits
    n_transitions: int  # memory_ops
    n_transitions_with_pairs: int  # memory_ops
    n_pairs: int  # memory_ops
    teafarm: dict[str, JSONValue]  # teafarm: question sources, judges, failure counts
    predicted: dict[str, int]  # lamp1: predictions per label
    classifier: dict[str, JSONValue]  # lamp1: the cross-fitted classifier
    imported: dict[str, JSONValue]  # locomo_import: the shipped judge's metric, the source's naming
    latency_ms: dict[str, float]  # locomo_import: the source's per-answer latency p50, p95, n
    retrieval: dict[str, JSONValue]  # longmemeval_qa: answers with a ranking, granularities
    missing_questions: list[str]  # longmemeval_qa: the release's questions this data copy lacks


def summary_path(run_dir: str | Path) -> Path:
    """Where a run folder's summary is."""
    return Path(run_dir) / SUMMARY_FILE


def has_summary(run_dir: str | Path) -> bool:
    """Has the run folder a summary (its run was scored)?"""
    return summary_path(run_dir).is_file()


def read_summary(run_dir: str | Path) -> Summary:
    """Read a run folder's summary; a file that is not a JSON object with ``metrics`` raises
    ``DatasetFormatError`` naming it (a missing file raises ``FileNotFoundError``)."""
    path = summary_path(run_dir)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DatasetFormatError(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("metrics"), dict):
        keys = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise DatasetFormatError(
            f"{path}: expected a JSON object with a 'metrics' object, got {keys}"
        )
    return cast(Summary, data)  # checked above: the file is the edge


def write_summary(run_dir: str | Path, summary: Summary) -> Path:
    """Write ``summary`` as the run folder's ``summary.json`` (atomic, no NaN)."""
    path = summary_path(run_dir)
    write_json(path, summary)
    return path


def metric_entry(summary: Summary, metric: str) -> MetricEntry | None:
    """The entry of ``metric`` in ``summary`` (None: the run did not score it)."""
    return summary["metrics"].get(metric)
