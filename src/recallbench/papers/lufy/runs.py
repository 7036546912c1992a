"""LUFY tables' shared reading: the paper's reference values, table specs, run selection by
config choice or dotted config path, memory snapshots and the episodes a run replayed."""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from recallbench.analysis import RunInfo, find_runs, latest_per_job
from recallbench.io import safe_name
from recallbench.records import Episode, MemoryItem
from recallbench.tables.engine import load_table_spec
from recallbench.tables.render import load_reference

PAPER = "lufy"
ALIASES = {"logs": "dataset.options.system"}
# Keys of rows and columns that place a cell rather than select runs.
CONTROL = frozenset({"label", "session", "qsession", "value", "random", "annotators"})


# -- references and specs -----------------------------------------------------------------


@lru_cache(maxsize=1)
def _reference() -> dict[str, Any]:
    return load_reference("lufy")


def lufy_reference(table_id: str) -> dict[str, Any]:
    """Return the paper's ``table<id>`` entry of ``references/lufy.yaml`` ({} when absent)."""
    return _reference().get(f"table{table_id}", {})


def paper_value(reference: dict, row: str, column: str, metric: str) -> Any:
    """Return the paper's value of (row, column, metric), or None when it reports none."""
    return reference.get("values", {}).get(row, {}).get(column, {}).get(metric)


def load_spec(experiment: str) -> dict[str, Any]:
    """Read the experiment's ``table:`` block (``reproduce.load_table_spec``) with LUFY defaults."""
    spec = load_table_spec(experiment)
    spec.setdefault("kind", "summary")
    return spec


# -- runs ---------------------------------------------------------------------------------


def table_runs(results_dir: str | Path, tag: str) -> list[RunInfo]:
    """Return the newest finished run of every job under ``results_dir/runs/<tag>``."""
    return list(latest_per_job(find_runs(results_dir, tag)).values())


def run_value(run: RunInfo, key: str) -> Any:
    """Return a run's config-group choice (``memory``) or dotted config value (``logs``)."""
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


def select(runs: Iterable[RunInfo], selector: dict[str, Any]) -> list[RunInfo]:
    """Return the runs matching every selecting key of ``selector`` (a value or a list)."""
    keys = [k for k in selector if k not in CONTROL]
    return [r for r in runs if all(run_value(r, k) in _as_list(selector[k]) for k in keys)]


def summary(run: RunInfo) -> dict[str, Any]:
    """Return the run's ``summary.json``."""
    return json.loads((run.path / "summary.json").read_text(encoding="utf-8"))


def snapshots(run: RunInfo, episode_ids: Iterable[str]) -> dict[str, dict[int, list[MemoryItem]]]:
    """Return {episode_id: {after_session: items}} from the run's ``memory/<episode>.jsonl``."""
    out: dict[str, dict[int, list[MemoryItem]]] = {}
    for episode_id in episode_ids:
        path = run.path / "memory" / f"{safe_name(episode_id)}.jsonl"
        if not path.exists():
            continue
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
        out[episode_id] = {
            int(r["after_session"]): [MemoryItem.from_dict(i) for i in r["items"]] for r in rows
        }
    return out


@lru_cache(maxsize=16)
def _load_cached(name: str, data_dir: str, options: str) -> tuple[Episode, ...]:
    from recallbench.datasets import load

    return tuple(load(name, data_dir, **json.loads(options)))


def run_episodes(run: RunInfo) -> dict[str, Episode]:
    """Load the episodes a run replayed (its dataset config), keyed by episode id."""
    ds = run.config.get("dataset") or {}
    options = json.dumps(ds.get("options") or {}, sort_keys=True)
    return {e.episode_id: e for e in _load_cached(ds["name"], str(ds["data_dir"]), options)}
