"""Read run folders: run selection, pandas frames, costs and Pareto fronts.

    from recallbench.analysis import find_results_dir, find_runs, load_summaries
    runs = find_runs(find_results_dir(), tag="theanine_table1")
    df = load_summaries(runs)        # one row per (run, metric[, session]) + overridden keys

Runs are keyed by ``(tag, stamp, job)``; every frame carries that key and one typed column per
config key any of the runs overrode (``memory.k``). Only files of run folders are read, through
the run layer's one reader (``run.read.read_run``: a ``RunRecord``); nothing
here runs a method or a model.
"""

from recallbench.analysis.frames import (
    load_predictions,
    load_summaries,
    load_usage,
    override_columns,
)
from recallbench.analysis.locate import explain_no_runs, find_results_dir, project_root
from recallbench.analysis.runs import (
    config_value,
    find_runs,
    latest_per_job,
    matches,
    override_keys,
    run_value,
    runs_in,
    select,
)

__all__ = [
    "config_value",
    "explain_no_runs",
    "find_results_dir",
    "find_runs",
    "latest_per_job",
    "load_predictions",
    "load_summaries",
    "load_usage",
    "matches",
    "override_columns",
    "override_keys",
    "project_root",
    "run_value",
    "runs_in",
    "select",
]
