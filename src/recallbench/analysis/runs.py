"""Find run folders and read what identifies them (tag, stamp, job, status, config choices)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

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


MATCH_KEYS = ("memory", "dataset", "generator", "embedder", "protocol", "judge")


def _as_list(value) -> list:
    return list(value) if isinstance(value, list | tuple) else [value]


def matches(run: RunInfo, selector: dict) -> bool:
    """Return True when the run's config choices match every ``MATCH_KEYS`` key of ``selector``
    (a value or a list of accepted values)."""
    for key in MATCH_KEYS:
        if key in selector and run.choice(key) not in _as_list(selector[key]):
            return False
    return True
