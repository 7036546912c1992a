"""LUFY tables' shared reading: the paper's reference values, the memory snapshots of a run and
the episodes it replayed (run selection itself is ``recallbench.analysis.select``)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from functools import lru_cache

from recallbench.analysis import RunInfo
from recallbench.io import safe_name
from recallbench.records import JSON, Episode, MemoryItem
from recallbench.tables.render import load_reference, table_id

PAPER = "lufy"


@lru_cache(maxsize=1)
def _reference() -> dict[str, JSON]:
    return load_reference(PAPER)


def lufy_reference(table: int | str) -> dict[str, JSON]:
    """Return the paper's entry for ``table`` (``table12``, ``12`` ...; {} when absent)."""
    entry: dict[str, JSON] = _reference().get(table_id(table), {})  # reference.yaml: JSON
    return entry


def paper_value(reference: Mapping[str, JSON], row: str, column: str, metric: str) -> JSON:
    """Return the paper's value of (row, column, metric), or None when it reports none."""
    return reference.get("values", {}).get(row, {}).get(column, {}).get(metric)


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
