"""THE summary-cell builder: a table's cells from its runs' ``summary.json``.

Every table whose numbers a run already computed (THEANINE 1/2/4/5/9, CareCall 4, CAIM 3-5, LUFY
3/11/13/16-18 and App. D) uses this one builder (``table.builder`` absent). A cell (row x column
x metric) takes the runs matching the row's and the column's selecting keys
(``recallbench.tables.spec.selector``: config groups, dotted config paths, ``logs``) and reads
one number per run from ``summary["metrics"][<metric>]``:

- column ``session: s``       -> ``per_session[s]`` (its value and n);
- column ``qsession: "s/q"``  -> ``per_question_session["s/q"]`` (LUFY Tables 16-18);
- column ``subset: name``      -> the entry of that subset of items (``subsets[name]``, e.g.
  CareCall's memory turns), then ``session``/``value`` as above;
- otherwise the field ``value:`` of the column, else of the row, else of the table (``value``
  by default; ``session_mean`` = THEANINE's "average of sessions" and LUFY's "Avg.").

A row whose selector matches no run (``memory: paper_only``) shows only the paper's values.

A run whose summary lacks the metric or the field gives nothing; the value is multiplied by the
metric's ``scale`` (ours in the paper's unit) and shown with its ``digits`` (default 2).

Weighting, decided once for every table: the runs of a cell (e.g. the MSC and CC runs of
THEANINE's "Avg." column) are pooled as the mean of their numbers weighted by each run's ``n``,
the items (responses, questions, users) the number was computed on, so each item counts once
whichever run it came from, and a dataset with more responses weighs more (as if the runs were
one). A number computed on no item (``n = 0``) carries no weight; a cell with no item is ``n/a``
with ``n = 0``: a count of nothing is 0, the value is not available, never invented. (LUFY's
former builder weighted ``n or 1``, which let a 0-item number count as one item, and wrote
``n/a`` for the n of empty cells; with one run per LUFY cell the values were the same.)

Options (``table:`` keys besides the schema's):

- ``value``: the summary field of columns without ``session``/``qsession`` (default ``value``);
- ``rows_by: <key>``: one row per distinct value of ``key`` among the runs (a swept config
  value, e.g. ``memory.threshold``), labelled by the value, instead of ``rows``;
- ``column_label``: the rendered column label, a format of ``{metric}`` (the metric's label) and
  ``{column}``; default ``"{column}"`` (a column holds its metrics side by side, THEANINE's
  layout); ``"{metric} {column}"`` gives one block of columns per metric (LUFY's layout).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from recallbench.analysis import RunInfo, run_value, select
from recallbench.tables.engine import BuiltTable, TableContext, reference_values
from recallbench.tables.render import Cell
from recallbench.tables.spec import TableSpec, selector

__all__ = ["pool", "rows_by", "summary_cells", "summary_table"]

Number = tuple[float, int]  # (value, n)


def pool(found: Sequence[Number]) -> tuple[float | None, int]:
    """Return the n-weighted mean of (value, n) pairs and the total n (None when n = 0)."""
    n = sum(k for _, k in found)
    return (sum(v * k for v, k in found) / n if n else None), n


def rows_by(runs: Sequence[RunInfo], key: str) -> list[dict[str, Any]]:
    """Return one row per distinct value of ``key`` among the runs (a sweep), sorted."""
    values = sorted({v for r in runs if (v := run_value(r, key)) is not None})
    return [{"label": f"{v:.2f}" if isinstance(v, float) else str(v), key: v} for v in values]


def entry_number(entry: Mapping[str, Any], column: Mapping[str, Any], field: str) -> Number | None:
    """Return the (value, n) a column reads from one metric's summary entry (None: absent)."""
    if "subset" in column:  # a subset of the items (CareCall's memory turns)
        entry = (entry.get("subsets") or {}).get(str(column["subset"]))
        if entry is None:
            return None
    for key, part in (("session", "per_session"), ("qsession", "per_question_session")):
        if key in column:
            sub = (entry.get(part) or {}).get(str(column[key]))
            return None if sub is None else (float(sub["value"]), int(sub["n"]))
    field = str(column.get("value", field))
    return (float(entry[field]), int(entry.get("n", 0))) if field in entry else None


def _layout(rows, columns, metrics, by_metric: bool):
    """Yield (row, column, metric) in display order (metric blocks first when ``by_metric``)."""
    if by_metric:
        return ((r, c, m) for m in metrics for r in rows for c in columns)
    return ((r, c, m) for r in rows for c in columns for m in metrics)


def summary_cells(spec: TableSpec, runs: Sequence[RunInfo]) -> tuple[list[Cell], list[RunInfo]]:
    """Return the table's cells and the runs they came from."""
    rows = (
        rows_by(runs, spec.option("rows_by")) if spec.option("rows_by", None) else spec.need("rows")
    )
    columns, metrics = spec.need("columns"), spec.need("metrics")
    field = str(spec.option("value", "value"))
    style = str(spec.option("column_label", "{column}"))
    reference = reference_values(spec)
    summaries: dict[str, dict] = {}
    cells, used = [], {}
    for row, column, metric in _layout(rows, columns, metrics, "{metric}" in style):
        matched = select(select(runs, selector(row)), selector(column))
        used.update({r.path: r for r in matched})
        found = []
        for run in matched:
            summary = summaries.get(str(run.path)) or _summary(run)
            summaries[str(run.path)] = summary
            entry = summary.get("metrics", {}).get(metric)
            at = str(row.get("value", field))  # a row may read another summary field
            if entry is not None and (got := entry_number(entry, column, at)) is not None:
                found.append(got)
        ours, n = pool(found)
        mspec = metrics[metric]
        label = mspec.get("label", metric)
        paper = reference.get(row["label"], {}).get(column["label"], {}).get(metric)
        cells.append(
            Cell(
                str(row["label"]),
                style.format(metric=label, column=column["label"]),
                label,
                None if ours is None else ours * mspec.get("scale", 1),
                paper,
                n,
                int(mspec.get("digits", 2)),
            )
        )
    return cells, list(used.values())


def _summary(run: RunInfo) -> dict[str, Any]:
    return json.loads((run.path / "summary.json").read_text(encoding="utf-8"))


def summary_table(spec: TableSpec, ctx: TableContext) -> BuiltTable:
    """The default builder: cells from ``summary.json`` of the runs ``ctx.runs``."""
    cells, used = summary_cells(spec, ctx.runs)
    return BuiltTable(cells, runs=used)
