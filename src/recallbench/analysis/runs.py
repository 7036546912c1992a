"""Find run folders and read what identifies them (tag, stamp, job, status, config choices).

``status`` is run.json's, except that a ``running`` record whose process is gone reads
``stale`` (``run_record.is_stale``). ``find_runs(finished=True)`` keeps the usable statuses,
``finished`` and ``degraded``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from recallbench.run_record import USABLE, is_stale


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
    status = info.get("status", "unknown")
    if is_stale(info):  # "running", but its process is gone (kill -9, node lost)
        status = "stale"
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
        status=status,
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
    if finished:  # finished or degraded (tables flag cells built from degraded runs)
        runs = [r for r in runs if r.status in USABLE]
    return sorted(runs, key=lambda r: (r.stamp, r.job))


def latest_per_job(runs: list[RunInfo]) -> dict[str, RunInfo]:
    """Keep the newest finished run of every job name."""
    out: dict[str, RunInfo] = {}
    for run in runs:  # sorted oldest first, so newer overwrite older
        out[run.job] = run
    return out


# Short names of config paths a selector may use: the conversation logs a run replayed (LUFY:
# each system's logs, ``dataset.options.system``).
ALIASES = {"logs": "dataset.options.system"}


def run_value(run: RunInfo, key: str) -> Any:
    """Return a run's config-group choice (``memory``) or config value (``memory.threshold``).

    A key without a dot names a config group; a dotted key (or an ``ALIASES`` name) a value of
    the run's resolved ``config.yaml``. Absent values are None.
    """
    key = ALIASES.get(key, key)
    if "." not in key:
        return run.choice(key)
    node: Any = run.config
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _as_list(value: Any) -> list:
    return list(value) if isinstance(value, list | tuple) else [value]


def matches(run: RunInfo, selector: Mapping[str, Any]) -> bool:
    """Return True when ``run_value(run, key)`` is in every ``selector[key]`` (a value or a list)."""
    return all(run_value(run, key) in _as_list(want) for key, want in selector.items())


def select(runs: Iterable[RunInfo], selector: Mapping[str, Any]) -> list[RunInfo]:
    """Return the runs that match ``selector`` (see ``matches``), in their order."""
    return [run for run in runs if matches(run, selector)]
