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

Every cell also carries the 95% episode-clustered bootstrap interval of its number
(``tables.intervals``: the run's own from summary.json, or, for a cell pooling several runs,
recomputed by a stratified bootstrap from their per-episode statistics) and the number of
episodes it rests on; with ``reference_row`` each other row is tested against that row by
episode, Holm-corrected across the table (``tables.significance``).

Options (``table:`` keys besides the schema's):

- ``value``: the summary field of columns without ``session``/``qsession`` (default ``value``);
- ``rows_by: <key>``: one row per distinct value of ``key`` among the runs (a swept config
  value, e.g. ``memory.threshold``), labelled by the value, instead of ``rows``;
- ``column_label``: the rendered column label, a format of ``{metric}`` (the metric's label) and
  ``{column}``; default ``"{column}"`` (a column holds its metrics side by side, THEANINE's
  layout); ``"{metric} {column}"`` gives one block of columns per metric (LUFY's layout);
- ``reference_row``, ``pair_by``, ``significance``: see ``tables.significance``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from recallbench.analysis import RunInfo, run_value, select
from recallbench.tables.cell import Cell
from recallbench.tables.engine import BuiltTable, TableContext, paper_setting, reference_values
from recallbench.tables.intervals import Found, entry_found, pooled_interval
from recallbench.tables.significance import mark_significance, settings_of
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
    found = entry_found(entry, column, field)
    return None if found is None else (found.value, found.n)


def _layout(rows, columns, metrics, by_metric: bool):
    """Yield (row, column, metric) in display order (metric blocks first when ``by_metric``)."""
    if by_metric:
        return ((r, c, m) for m in metrics for r in rows for c in columns)
    return ((r, c, m) for r in rows for c in columns for m in metrics)


def summary_cells(spec: TableSpec, runs: Sequence[RunInfo]) -> tuple[list[Cell], list[RunInfo]]:
    """Return the table's cells and the runs they came from."""
    built = _cells(spec, runs)
    return built.cells, list(built.used.values())


Key = tuple[str, str, str]  # (row, column, metric) labels of a cell


@dataclass
class _Built:
    """Cells, the runs used, each cell's per-run numbers (paired tests), non-comparability."""

    cells: list[Cell] = field(default_factory=list)
    used: dict[Any, RunInfo] = field(default_factory=dict)
    behind: dict[Key, list[Found]] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    assessed: bool = False  # some cell has a value from runs


def _read(runs, metric, column, field_name, summaries) -> tuple[list[Found], list[RunInfo], str]:
    """The numbers of ``metric`` the runs give for ``column``, the runs giving one, a detail."""
    found, sources, details = [], [], []
    for run in runs:
        summary = summaries.get(str(run.path)) or _summary(run)
        summaries[str(run.path)] = summary
        entry = summary.get("metrics", {}).get(metric)
        stratum = str(run.config.get("dataset", {}).get("name", ""))
        if entry is not None and (got := entry_found(entry, column, field_name, stratum)):
            found.append(got)
            if got.n > 0:
                sources.append(run)
                meta = entry.get("meta") or {}
                details.append(str(meta.get("featurizer") or meta.get("model") or ""))
    return found, sources, ", ".join(sorted({d for d in details if d}))


def _cells(spec: TableSpec, runs: Sequence[RunInfo]) -> _Built:
    rows = (
        rows_by(runs, spec.option("rows_by")) if spec.option("rows_by", None) else spec.need("rows")
    )
    columns, metrics = spec.need("columns"), spec.need("metrics")
    field_name = str(spec.option("value", "value"))
    style = str(spec.option("column_label", "{column}"))
    reference = reference_values(spec)
    setting = paper_setting(spec)
    summaries: dict[str, dict] = {}
    out = _Built()
    for row, column, metric in _layout(rows, columns, metrics, "{metric}" in style):
        matched = select(select(runs, selector(row)), selector(column))
        out.used.update({r.path: r for r in matched})
        at = str(row.get("value", field_name))  # a row may read another summary field
        found, sources, detail = _read(matched, metric, column, at, summaries)
        ours, n = pool([(f.value, f.n) for f in found])
        ci, _ = pooled_interval(found) if ours is not None else (None, "")
        mspec = metrics[metric]
        label, scale = mspec.get("label", metric), mspec.get("scale", 1)
        weighted = [f for f in found if f.n > 0]
        episodes = [f.episodes for f in weighted]
        clusters = sum(episodes) if episodes and None not in episodes else None
        reasons = setting.reasons(sources, metric, detail)
        out.reasons += reasons
        out.assessed = out.assessed or bool(sources)
        cell = Cell(
            str(row["label"]),
            style.format(metric=label, column=column["label"]),
            label,
            None if ours is None else ours * scale,
            reference.get(row["label"], {}).get(column["label"], {}).get(metric),
            n,
            int(mspec.get("digits", 2)),
            episodes=clusters,
            ci_low=None if ci is None else ci[0] * scale,
            ci_high=None if ci is None else ci[1] * scale,
            comparable=not reasons,
            coverage=setting.coverage(sources, str(column["label"]), clusters) if sources else "",
        )
        out.cells.append(cell)
        out.behind[cell.row, cell.column, cell.metric] = weighted
    return out


def _summary(run: RunInfo) -> dict[str, Any]:
    return json.loads((run.path / "summary.json").read_text(encoding="utf-8"))


def summary_table(spec: TableSpec, ctx: TableContext) -> BuiltTable:
    """The default builder: cells from ``summary.json`` of the runs ``ctx.runs``.

    With ``reference_row`` in the spec, every other row is tested against it
    (``tables.significance``).
    """
    built = _cells(spec, ctx.runs)
    notes = []
    if (settings := settings_of(spec)) is not None:
        notes = mark_significance(built.cells, built.behind, settings)
    header = paper_setting(spec).header(built.reasons, spec.paper) if built.assessed else {}
    return BuiltTable(built.cells, runs=list(built.used.values()), header=header, notes=notes)
