"""Run folders as pandas frames (for notebooks). Reads only files in run folders."""

from __future__ import annotations

import json

import pandas as pd

from recallbench.analysis.runs import RunInfo


def load_summaries(runs: list[RunInfo]) -> pd.DataFrame:
    """One row per (run, metric, session); session ``all`` is the whole run."""
    rows = []
    for run in runs:
        summary = json.loads((run.path / "summary.json").read_text())
        for metric, entry in summary.get("metrics", {}).items():
            base = {
                "tag": run.tag,
                "stamp": run.stamp,
                "job": run.job,
                "metric": metric,
                **{f"choice_{k}": v for k, v in run.choices.items()},
            }
            rows.append(
                {
                    **base,
                    "session": "all",
                    "value": entry.get("value"),
                    "session_mean": entry.get("session_mean"),
                    "n": entry.get("n"),
                    **_ci(entry),
                }
            )
            for session, sub in (entry.get("per_session") or {}).items():
                rows.append(
                    {
                        **base,
                        "session": session,
                        "value": sub.get("value"),
                        "session_mean": None,
                        "n": sub.get("n"),
                        **_ci(sub),
                    }
                )
    return pd.DataFrame(rows)


def _ci(entry: dict) -> dict:
    """``ci_low``/``ci_high`` of the entry's episode-clustered 95% CI (None: no interval)."""
    ci = entry.get("ci95") or (None, None)
    return {"ci_low": ci[0], "ci_high": ci[1]}


def load_predictions(run: RunInfo) -> pd.DataFrame:
    """The run's predictions, one row each, with usage columns flattened."""
    rows = []
    with (run.path / "predictions.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            usage = d.pop("usage", {}) or {}
            d.update({f"usage_{k}": v for k, v in usage.items()})
            rows.append(d)
    df = pd.DataFrame(rows)
    df["job"] = run.job
    return df


def load_usage(runs: list[RunInfo]) -> pd.DataFrame:
    """Usage totals and per-stage cost of each run."""
    rows = []
    for run in runs:
        usage = json.loads((run.path / "usage.json").read_text())
        row = {"job": run.job, "stamp": run.stamp, **usage.get("totals", {})}
        for stage, bucket in (usage.get("by_stage") or {}).items():
            row[f"cost_{stage}"] = bucket.get("cost_usd")
        rows.append(row)
    return pd.DataFrame(rows)
