"""THE summary-cell builder: a table's cells from its runs' ``summary.json``.

Every table whose numbers a run already computed (THEANINE 1/2/4/5/9, CareCall 4, CAIM 3-5, LUFY
3/11/13/16-18 and App. D) uses this one builder (``table.builder`` absent). A cell (row x column
x metric) takes the runs matching the row's and the column's selecting keys
(``tables.entry.Entry.select``: config groups, dotted config paths, ``logs``) and reads
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

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from recallbench.analysis import run_value, select
from recallbench.metrics.summary import Summary, metric_entry
from recallbench.run.read import RunRecord, read_summary
from recallbench.tables.cell import Cell, seed_sd
from recallbench.tables.comparability import Setting, is_fixture
from recallbench.tables.engine import BuiltTable, TableContext, paper_setting, reference_values
from recallbench.tables.entry import Entry
from recallbench.tables.family import mark_significance
from recallbench.tables.intervals import Found, entry_found, pooled_interval, pooled_seeds
from recallbench.tables.render import reference_value
from recallbench.tables.significance import settings_of
from recallbench.tables.spec import TableSpec

__all__ = ["left_out_notes", "pool", "rows_by", "summary_cells", "summary_table"]

Number = tuple[float, int]  # (value, n)


def pool(found: Sequence[Number]) -> tuple[float | None, int]:
    """Return the n-weighted mean of (value, n) pairs and the total n (None when n = 0)."""
    n = sum(k for _, k in found)
    return (sum(v * k for v, k in found) / n if n else None), n


def rows_by(runs: Sequence[RunRecord], key: str) -> list[Entry]:
    """Return one row per distinct value of ``key`` among the runs (a sweep), sorted."""
    found: set[Any] = {v for r in runs if (v := run_value(r, key)) is not None}  # sortable scalars
    values = sorted(found)
    return [Entry(f"{v:.2f}" if isinstance(v, float) else str(v), {key: v}) for v in values]


def entry_number(entry: Mapping[str, Any], column: Entry, field: str) -> Number | None:
    """Return the (value, n) a column reads from one metric's summary entry (None: absent)."""
    found = entry_found(entry, column, field)
    return None if found is None else (found.value, found.n)


def _layout(
    rows: Sequence[Entry], columns: Sequence[Entry], metrics: Iterable[str], by_metric: bool
) -> Iterator[tuple[Entry, Entry, str]]:
    """Yield (row, column, metric) in display order (metric blocks first when ``by_metric``)."""
    if by_metric:
        return ((r, c, m) for m in metrics for r in rows for c in columns)
    return ((r, c, m) for r in rows for c in columns for m in metrics)


def summary_cells(spec: TableSpec, runs: Sequence[RunRecord]) -> tuple[list[Cell], list[RunRecord]]:
    """Return the table's cells and the runs they came from."""
    built = _cells(spec, runs)
    return built.cells, list(built.used.values())


Key = tuple[str, str, str]  # (row, column, metric) labels of a cell
Summaries = dict[str, Summary]  # summary.json per run folder, read once


@dataclass
class _Built:
    """Cells, the runs used (per row), each cell's per-run numbers, why cells are not comparable."""

    cells: list[Cell] = field(default_factory=list)
    used: dict[Any, RunRecord] = field(default_factory=dict)
    row_runs: dict[str, dict[Any, RunRecord]] = field(default_factory=dict)
    behind: dict[Key, list[Found]] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    left_out: dict[tuple[str, str], int] = field(default_factory=dict)  # (column, dataset)
    assessed: bool = False  # some cell has a value from runs
    setting: Setting = field(default_factory=lambda: Setting(False))  # the paper's setting
    sessions: dict[str, tuple[int, set[int]]] = field(default_factory=dict)  # a cell's column
    # label -> (its session, the sessions its runs scored)
    reference: Mapping[str, object] = field(default_factory=dict)  # the paper's values


def _read(
    runs: Sequence[RunRecord],
    metric: str,
    column: Entry,
    field_name: str,
    summaries: Summaries,
) -> list[tuple[RunRecord, Found]]:
    """The (run, number) pairs of ``metric`` the runs give for ``column``."""
    out = []
    for run in runs:
        summary = summaries.get(str(run.path)) or _summary(run)
        summaries[str(run.path)] = summary
        entry = metric_entry(summary, metric)
        stratum = str(run.config.dataset.name or "")
        if entry is not None and (got := entry_found(entry, column, field_name, stratum)):
            out.append((run, got))
    return out


def _detail(run: RunRecord, metric: str, summaries: Summaries) -> str:
    meta = (metric_entry(summaries[str(run.path)], metric) or {}).get("meta") or {}
    return str(meta.get("featurizer") or meta.get("model") or "")


def _real_only(
    pairs: list[tuple[RunRecord, Found]], column: str, out: _Built
) -> list[tuple[RunRecord, Found]]:
    """Leave fixture runs out of a cell that also pools real data (noted per column/dataset)."""
    real = [(r, f) for r, f in pairs if not is_fixture(r) and f.n > 0]
    if not real or len(real) == len([p for p in pairs if p[1].n > 0]):
        return pairs
    for run, found in pairs:
        if is_fixture(run) and found.n > 0:
            key = (column, found.stratum or "?")
            out.left_out[key] = max(out.left_out.get(key, 0), found.episodes or 0)
    return [(r, f) for r, f in pairs if not is_fixture(r)]


def _cells(spec: TableSpec, runs: Sequence[RunRecord]) -> _Built:
    rows: Sequence[Entry] = (
        rows_by(runs, spec.option("rows_by")) if spec.option("rows_by", None) else spec.need("rows")
    )
    columns, metrics = spec.need("columns"), spec.need("metrics")
    field_name = str(spec.option("value", "value"))
    style = str(spec.option("column_label", "{column}"))
    summaries: Summaries = {}
    out = _Built(setting=paper_setting(spec), reference=reference_values(spec))
    for row, column, metric in _layout(rows, columns, metrics, "{metric}" in style):
        matched = select(select(runs, row.select), column.select)
        out.used.update({r.path: r for r in matched})
        out.row_runs.setdefault(row.label, {}).update({r.path: r for r in matched})
        at = field_name if row.value is None else row.value  # a row may read another field
        name = row.read.get(metric, metric)  # the row's name of it
        pairs = _read(matched, name, column, at, summaries)
        pairs = _real_only(pairs, column.label, out)
        cell = _cell(spec, row, column, metric, style, pairs, summaries, out)
        if column.session is not None:  # which sessions the runs scored at all
            _, seen = out.sessions.setdefault(cell.column, (column.session, set()))
            for run in matched:
                entry = metric_entry(summaries[str(run.path)], name) or {}
                seen.update(int(k) for k in entry.get("per_session") or {})
        out.cells.append(cell)
        out.behind[cell.row, cell.column, cell.metric] = [f for _, f in pairs if f.n > 0]
    return out


def _cell(
    spec: TableSpec,
    row: Entry,
    column: Entry,
    metric: str,
    style: str,
    pairs: list[tuple[RunRecord, Found]],
    summaries: Summaries,
    out: _Built,
) -> Cell:
    """One cell from the (run, number) pairs behind it; its reasons go to ``out``."""
    setting = out.setting
    found = [f for _, f in pairs]
    ours, n = pool([(f.value, f.n) for f in found])
    ci, _ = pooled_interval(found) if ours is not None else (None, "")
    mspec = spec.need("metrics")[metric]
    label, scale = mspec.label_or(metric), mspec.scale_or(1)
    sources = [r for r, f in pairs if f.n > 0]
    episodes = [f.episodes for f in found if f.n > 0]
    known = [e for e in episodes if e is not None]
    clusters = sum(known) if episodes and len(known) == len(episodes) else None
    detail = ", ".join(sorted({d for r in sources if (d := _detail(r, metric, summaries))}))
    reasons = setting.reasons(sources, metric, detail, label)
    out.reasons += reasons
    out.assessed = out.assessed or bool(sources)
    where = (column.label, row.label)
    seeds = pooled_seeds(found) if ours is not None else None
    sd = seed_sd(seeds)
    return Cell(
        row.label,
        style.format(metric=label, column=column.label),
        label,
        None if ours is None else ours * scale,
        reference_value(out.reference, row.label, column.label, metric),
        n,
        mspec.digits_or(2),
        episodes=clusters,
        ci_low=None if ci is None else ci[0] * scale,
        ci_high=None if ci is None else ci[1] * scale,
        comparable=(not reasons) if setting.declared and sources else None,
        coverage=setting.coverage(sources, where[0], clusters, where[1]) if sources else "",
        seed_sd=None if sd is None else sd * scale,
        seeds=len(seeds) if sd is not None and seeds else None,
    )


def left_out_notes(left_out: Mapping[tuple[str, str], int]) -> list[str]:
    """One note per column whose cells left fixture runs out of a pool with real data."""
    by_column: dict[str, list[str]] = {}
    for (column, dataset), k in left_out.items():
        by_column.setdefault(column, []).append(f"{dataset} ({k} fixture episode(s))")
    return [
        f"{column}: the fixture runs of {', '.join(parts)} are left out of cells that pool real "
        "data (a fixture never enters an average with real data); these cells rest on the "
        "real-data runs only"
        for column, parts in by_column.items()
    ]


def empty_session_notes(built: _Built) -> list[str]:
    """Why a session column is n/a in every row: no run scored that session."""
    notes = []
    for column, (session, seen) in built.sessions.items():
        if session in seen or any(c.ours is not None for c in built.cells if c.column == column):
            continue  # scored: a column empty for another reason is not this note's
        scored = ", ".join(map(str, sorted(seen))) or "none"
        why = f"{column}: n/a in every row: no run of this table scored session {session} (the "
        why += f"runs score sessions {scored})"
        if seen and max(seen) < session:
            why += f"; the episodes of the data they ran on end before session {session}"
        notes.append(why)
    return notes


def _summary(run: RunRecord) -> Summary:
    return read_summary(run.path)


def summary_table(spec: TableSpec, ctx: TableContext) -> BuiltTable:
    """The default builder: cells from ``summary.json`` of the runs ``ctx.runs``.

    With ``reference_row`` in the spec, every other row is tested against it
    (``tables.significance``).
    """
    built = _cells(spec, ctx.runs)
    notes = left_out_notes(built.left_out) + empty_session_notes(built)
    if (settings := settings_of(spec)) is not None:
        notes += mark_significance(built.cells, built.behind, settings)
    header = built.setting.header(built.reasons) if built.assessed else {}
    row_runs = {row: list(runs.values()) for row, runs in built.row_runs.items()}
    return BuiltTable(
        built.cells,
        runs=list(built.used.values()),
        header=header,
        notes=notes,
        reasons=built.reasons,
        row_runs=row_runs,
        tested=settings is not None,
    )
