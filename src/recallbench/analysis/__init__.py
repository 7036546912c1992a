"""Read run folders: run selection, pandas frames, costs and Pareto fronts.

    from recallbench.analysis import find_runs, load_summaries, load_predictions
    runs = find_runs("results", tag="theanine_table1")
    df = load_summaries(runs)        # one row per (run, metric[, session])

Only files of run folders are read (``run.json``, ``config.yaml``, ``summary.json``,
``predictions.jsonl``, ``usage.json``, ``memory/``); nothing here runs a method or a model.
"""

from recallbench.analysis.frames import load_predictions, load_summaries, load_usage
from recallbench.analysis.runs import (
    RunInfo,
    find_runs,
    latest_per_job,
    matches,
    run_value,
    select,
)

__all__ = [
    "RunInfo",
    "find_runs",
    "latest_per_job",
    "matches",
    "run_value",
    "select",
    "load_predictions",
    "load_summaries",
    "load_usage",
]
