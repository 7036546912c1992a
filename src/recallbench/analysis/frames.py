"""Run folders as pandas frames (for notebooks). Reads only files in run folders.

Every frame carries the run's key, ``tag``, ``stamp`` and ``job``, and one column per config
key that any of the runs overrode on its command line (``memory.k``, ``memory``, ``episodes``
...), holding each run's own value of that key read from its config (``run.read``), typed (``2``, not
``"2"``; a run that left the key at its default shows the default). A sweep is then data:
``frame.plot.scatter(x="memory.k", y="value")`` needs no job-name parsing. Overridden keys that
are the key itself (``tag``, ``job``) are not repeated. Frames keep their columns when empty.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from recallbench.analysis.runs import config_value, override_keys
from recallbench.run.read import MetricSummary, RunRecord

KEY = ("tag", "stamp", "job")
SUMMARY_COLUMNS = (*KEY, "metric", "session", "value", "session_mean", "n", "ci_low", "ci_high")
USAGE_COLUMNS = (*KEY, "calls", "cached_calls", "failures", "parse_failures", "cost_usd")


def override_columns(runs: list[RunRecord]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """Map each run's key to ``{config key: its typed value}`` over every key any run overrode."""
    keys = list(dict.fromkeys(k for run in runs for k in override_keys(run) if k not in KEY))
    return {run.key: {k: config_value(run, k) for k in keys} for run in runs}


def _base(run: RunRecord, overrides: dict[tuple[str, str, str], dict[str, Any]]) -> dict[str, Any]:
    return {
        "tag": run.tag,
        "stamp": run.stamp,
        "job": run.job,
        **{f"choice_{k}": v for k, v in run.choices.items()},
        **overrides[run.key],
    }


def _typed(
    frame: pd.DataFrame, overrides: dict[tuple[str, str, str], dict[str, Any]]
) -> pd.DataFrame:
    """Keep override columns typed where some runs lack the key: integers stay integers
    (``Int64``), flags stay flags (``boolean``), instead of pandas' float and object."""
    columns = list(dict.fromkeys(k for values in overrides.values() for k in values))
    for column in columns:
        values = [v[column] for v in overrides.values() if v.get(column) is not None]
        if values and all(isinstance(v, bool) for v in values):
            frame[column] = frame[column].astype("boolean")
        elif values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            frame[column] = frame[column].astype("Int64")
    return frame


def load_summaries(runs: list[RunRecord]) -> pd.DataFrame:
    """One row per (run, metric, session); session ``all`` is the whole run."""
    overrides = override_columns(runs)
    rows = []
    for run in runs:
        for metric, entry in run.metrics.items():
            base = {**_base(run, overrides), "metric": metric}
            rows.append(
                {
                    **base,
                    "session": "all",
                    "value": entry.value,
                    "session_mean": entry.session_mean,
                    "n": entry.n,
                    **_ci(entry),
                }
            )
            for session, sub in entry.per_session.items():
                rows.append(
                    {
                        **base,
                        "session": session,
                        "value": sub.value,
                        "session_mean": None,
                        "n": sub.n,
                        **_ci(sub),
                    }
                )
    return _typed(_frame(rows, SUMMARY_COLUMNS), overrides)


def _frame(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> pd.DataFrame:
    """A frame of ``rows`` that has at least ``columns`` (so an empty one can be filtered)."""
    frame = pd.DataFrame(rows)
    for column in columns:
        if column not in frame.columns:
            frame[column] = pd.Series(dtype=object)
    return frame


def _ci(entry: MetricSummary) -> dict[str, float | None]:
    """``ci_low``/``ci_high`` of the entry's episode-clustered 95% CI (None: no interval)."""
    low, high = entry.ci or (None, None)
    return {"ci_low": low, "ci_high": high}


def load_predictions(run: RunRecord) -> pd.DataFrame:
    """The run's predictions, one row each, with usage columns flattened and the run's key."""
    rows = []
    for p in run.predictions:
        d = p.to_dict()
        usage = d.pop("usage", {}) or {}
        d.update({f"usage_{k}": v for k, v in usage.items()})
        rows.append(d)
    df = _frame(rows, ("pred_id", "episode_id", "session_index", "kind", "output", "reference"))
    for column, value in zip(KEY, run.key, strict=True):
        df[column] = value
    return df


def load_usage(runs: list[RunRecord]) -> pd.DataFrame:
    """Usage totals and per-stage cost of each run, one row per run."""
    overrides = override_columns(runs)
    rows = []
    for run in runs:  # a run without usage.json (an imported one) has its key columns only
        usage = run.usage
        row = {**_base(run, overrides), **(usage.totals.raw if usage is not None else {})}
        for stage, bucket in (usage.by_stage if usage is not None else {}).items():
            row[f"cost_{stage}"] = bucket.cost_usd
        rows.append(row)
    return _typed(_frame(rows, USAGE_COLUMNS), overrides)
