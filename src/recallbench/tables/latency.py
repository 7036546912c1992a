"""Latency cells: per-question p50 / p95 from run summaries, ours and a published source's.

A LoCoMo run's ``summary.json`` holds ``latency`` (``protocols.locomo._latency``: seconds per
timed stage, ``search``, ``answer``, ``total``, ``memory_construction``); an imported answer file
with ``duration_ms`` holds ``latency_ms`` (milliseconds, the source's end-to-end time per
question, ``protocols.locomo_import``). The default summary builder reads ``metrics`` entries
only, so this builder reads these blocks. Columns name a ``stage`` and a ``quantile`` (``p50``,
``p95``); an imported run's ``latency_ms`` is its ``total`` stage. Cells are in milliseconds;
a stage a run did not time is ``n/a`` (never 0). A row matching several runs takes the newest
(no pooling of percentiles: a pooled p95 is not a mean of p95s). No interval: a percentile's
clustered interval is not in the summaries.

    table:
      builder: recallbench.tables.latency.latency_table
      columns: [{label: total p50, stage: total, quantile: p50}, ...]
      metrics: {latency: {label: "ms", digits: 1}}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recallbench.analysis import select
from recallbench.run.read import RunRecord, read_summary
from recallbench.tables.cell import Cell
from recallbench.tables.engine import BuiltTable, TableContext
from recallbench.tables.spec import TableSpec

__all__ = ["latency_table", "run_latency"]

QUANTILES = ("p50", "p95")


def run_latency(
    summary: Mapping[str, object], stage: str, quantile: str
) -> tuple[float, int] | None:
    """(milliseconds, n) of ``stage``'s ``quantile`` in a run summary (``locomo_qa``'s
    ``latency``, ``locomo_import``'s ``latency_ms``: ``protocols.locomo.LocomoSummary``,
    ``protocols.locomo_import.ImportSummary``); None: not timed."""
    timed = summary.get("latency")
    block = timed.get(stage) if isinstance(timed, Mapping) else None
    if isinstance(block, Mapping) and quantile in block:
        return 1000.0 * _number(block[quantile]), int(_number(block.get("n") or 0))
    imported = summary.get("latency_ms")
    if stage == "total" and isinstance(imported, Mapping) and quantile in imported:
        return float(imported[quantile]), int(imported.get("n") or 0)
    return None


def _number(value: object) -> float:
    if not isinstance(value, int | float | str):
        raise TypeError(f"summary latency: expected a number, got {value!r:.80}")
    return float(value)


def _newest(runs: list[RunRecord]) -> RunRecord | None:
    return max(runs, key=lambda r: str(r.path.parent.name)) if runs else None


def latency_table(spec: TableSpec, ctx: TableContext) -> BuiltTable:
    """One cell per (row, column): the newest matching run's stage percentile, in ms."""
    metric, mspec = next(iter(spec.need("metrics").items()))
    cells: list[Cell] = []
    used: dict[Any, RunRecord] = {}
    row_runs: dict[str, list[RunRecord]] = {}
    for row in spec.need("rows"):
        for column in spec.need("columns"):
            if column.quantile not in QUANTILES:
                raise spec.error("columns", f"{column.label}: quantile should be p50 or p95")
            if column.stage is None:
                raise spec.error("columns", f"{column.label}: stage missing (the timed stage)")
            run = _newest(select(select(ctx.runs, row.select), column.select))
            got = None
            if run is not None:
                got = run_latency(read_summary(run.path), column.stage, column.quantile)
            if got is not None and run is not None:
                used[run.path] = run
                row_runs.setdefault(row.label, []).append(run)
            value, n = got if got is not None else (None, 0)
            label = mspec.label_or(metric)
            cells.append(Cell(row.label, column.label, label, value, None, n, mspec.digits_or(1)))
    return BuiltTable(cells, runs=list(used.values()), row_runs=row_runs)
