"""Read run folders into pandas (for notebooks and tables). Reads only files in run folders.

from recallbench.analysis import find_runs, load_summaries, load_predictions
runs = find_runs("results", tag="theanine_table1")
df = load_summaries(runs)        # one row per (run, metric[, session])
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml


@dataclass(frozen=True)
class RunInfo:
    """A run folder and what identifies it."""

    path: Path
    tag: str
    stamp: str
    job: str
    status: str
    choices: dict
    config: dict

    def choice(self, group: str) -> str | None:
        """Return the config-group choice (e.g. ``memory``) the run was made with."""
        return self.choices.get(group)


def _read_run(path: Path) -> RunInfo | None:
    run_json = path / "run.json"
    if not run_json.exists():
        return None
    info = json.loads(run_json.read_text())
    config = (
        yaml.safe_load((path / "config.yaml").read_text())
        if (path / "config.yaml").exists()
        else {}
    )
    return RunInfo(
        path=path,
        tag=path.parent.parent.name,
        stamp=path.parent.name,
        job=path.name,
        status=info.get("status", "unknown"),
        choices=dict((config or {}).get("choices") or {}),
        config=config or {},
    )


def find_runs(
    results_dir: str | Path, tag: str | None = None, *, finished: bool = True
) -> list[RunInfo]:
    """List run folders under ``results_dir/runs`` (optionally one tag), oldest stamp first."""
    root = Path(results_dir) / "runs"
    pattern = f"{tag}/*/*" if tag else "*/*/*"
    runs = [r for p in sorted(root.glob(pattern)) if p.is_dir() and (r := _read_run(p))]
    if finished:
        runs = [r for r in runs if r.status == "finished"]
    return sorted(runs, key=lambda r: (r.stamp, r.job))


def latest_per_job(runs: list[RunInfo]) -> dict[str, RunInfo]:
    """Keep the newest finished run of every job name."""
    out: dict[str, RunInfo] = {}
    for run in runs:  # sorted oldest first, so newer overwrite older
        out[run.job] = run
    return out


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
                    }
                )
    return pd.DataFrame(rows)


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
