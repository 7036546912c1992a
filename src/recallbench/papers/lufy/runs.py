"""LUFY tables' shared reading: the paper's reference values, the system whose logs a row reads,
the memory snapshots of a run and the episodes it replayed (run selection itself is ``recallbench.analysis.select``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache

from recallbench.records import JSON, Episode, MemoryItem
from recallbench.run.read import RunRecord
from recallbench.tables import TableSpec
from recallbench.tables.cell import Value
from recallbench.tables.entry import Entry
from recallbench.tables.render import load_reference, reference_value, table_id

PAPER = "lufy"


@lru_cache(maxsize=1)
def _reference() -> dict[str, JSON]:
    return load_reference(PAPER)


def lufy_reference(table: int | str) -> dict[str, JSON]:
    """Return the paper's entry for ``table`` (``table12``, ``12`` ...; {} when absent)."""
    entry: dict[str, JSON] = _reference().get(table_id(table), {})  # reference.yaml: JSON
    return entry


def paper_value(reference: Mapping[str, JSON], row: str, column: str, metric: str) -> Value:
    """Return the paper's value of (row, column, metric) of a ``lufy_reference`` entry, or None
    when it reports none (``tables.render.reference_value``)."""
    return reference_value(reference.get("values") or {}, row, column, metric)


def row_logs(spec: TableSpec, row: Entry) -> str:
    """The LUFY system whose conversation logs a row reads (its ``logs:``; an error without)."""
    if row.logs is None:
        raise spec.error("rows", f"{row.label}: logs missing (the system whose logs it reads)")
    return row.logs


def snapshots(run: RunRecord, episode_ids: Iterable[str]) -> dict[str, dict[int, list[MemoryItem]]]:
    """Return {episode_id: {after_session: items}} from the run's ``memory/<episode>.jsonl``."""
    out: dict[str, dict[int, list[MemoryItem]]] = {}
    for episode_id in episode_ids:
        if found := run.snapshots_of(episode_id):
            out[episode_id] = {s.after_session: list(s.items) for s in found}
    return out


def run_episodes(run: RunRecord) -> dict[str, Episode]:
    """Load the episodes a run replayed (its dataset config, cached), keyed by episode id."""
    return run.dataset_episodes()
