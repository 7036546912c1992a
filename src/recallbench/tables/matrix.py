"""The cross-paper matrix tables: methods x settings per measure, and quality vs cost.

``recallbench-matrix`` (``cli/matrix.py``) writes ``<results>/runs/<tag>/plan.json``: the
methods (rows), the settings (columns: label, how its runs are selected, where its cells read,
the metrics its protocol reports, the facts its sampled data provides) and every cell's status
(``unavailable``/``failed`` with a reason, ``finished``). A matrix table names that tag::

    table:
      id: matrix_f1
      title: "..."
      runs: {tag: matrix}
      builder: recallbench.tables.matrix.matrix_table
      metrics: {f1: {label: F1, scale: 100, digits: 1}}

and gets one row per method, one column per setting whose protocol reports one of its
metrics, the cells from THE summary-cell builder (``tables.cells``: value, 95% interval,
paired test by episode against the plan's reference method, Holm-corrected within each column:
``significance.family: column``, as each setting is an experiment on its own data),
and, where a cell has no run, ``n/a: <why>`` (the short reason; the notes give each reason in
full with its cells). The header states the episodes sampled per setting.

``matrix_cost`` gives, per method and setting, the setting's quality measure (the first of the
``quality:`` option's metrics the setting reports) and the tokens spent per episode writing
memory (usage.json stage ``memory``) and answering (stage ``answer``; judging is evaluation,
not the agent): a figure of kind ``pareto`` draws quality against each cost per setting.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from recallbench.analysis import select
from recallbench.analysis.runs import note_read
from recallbench.errors import ConfigError, DataNotFoundError
from recallbench.run.read import RunRecord
from recallbench.tables.cell import Cell
from recallbench.tables.cells import summary_table
from recallbench.tables.engine import BuiltTable, TableContext
from recallbench.tables.entry import Entry, parse_entry
from recallbench.tables.spec import TableSpec

__all__ = ["load_plan", "matrix_cost", "matrix_table", "short_reason"]

NOT_RUN = "not run (no finished run of this cell; run `make matrix`)"
STAGES = {"write": "memory", "answer": "answer"}  # cost metric -> usage.json stage


def load_plan(results_dir: str | Path, tag: str | None) -> dict[str, Any]:
    """Read ``<results>/runs/<tag>/plan.json`` (an error naming it and the command when absent)."""
    path = _plan_path(results_dir, tag)
    note_read(path.parent)  # a table of the matrix reads its plan: keyed on it (cli/table.py)
    if not path.is_file():
        raise DataNotFoundError(
            f"{path} not found: plan and run the matrix first (`make matrix` or "
            "`python -m recallbench.cli.matrix`)"
        )
    plan = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(plan, dict):
        raise DataNotFoundError(f"{path}: expected a JSON object (the matrix plan)")
    return plan


def _plan_path(results_dir: str | Path, tag: str | None) -> Path:
    return Path(results_dir) / "runs" / str(tag) / "plan.json"


def short_reason(reason: str) -> str:
    """The head of a reason for the cell (``needs gold memory (msc ...)`` -> ``needs gold memory``)."""
    return reason.split(": ")[0].split(" (")[0].strip()


def _rows(plan: Mapping[str, Any]) -> list[Entry]:
    return [Entry(str(m["label"]), {"memory": m["memory"]}) for m in plan["methods"]]


def _columns(plan_path: Path, settings: Sequence[Mapping[str, Any]]) -> list[Entry]:
    """A column per setting: its selector and where its cells read (plan.json's place)."""

    def fail(key: str, message: str) -> ConfigError:
        return ConfigError(f"{plan_path}: settings: {key}: {message}")

    return [
        parse_entry({"label": s["label"], **s["selector"], **s["place"]}, str(s["label"]), fail)
        for s in settings
    ]


def _reference(plan: Mapping[str, Any]) -> str | None:
    labels = {m["memory"]: m["label"] for m in plan["methods"]}
    return labels.get(plan.get("reference"))


def _why(plan: Mapping[str, Any], setting: str, memory: str) -> str:
    cell = plan["cells"].get(setting, {}).get(memory, {})
    return str(cell.get("reason") or NOT_RUN)


def explain_empty(
    cells: Sequence[Cell], plan: Mapping[str, Any], settings: Sequence[Mapping[str, Any]]
) -> tuple[list[Cell], list[str]]:
    """Give each cell without a value its short reason; return the cells and a note per reason."""
    key_of = {s["label"]: s["key"] for s in settings}
    memory_of = {m["label"]: m["memory"] for m in plan["methods"]}
    out: list[Cell] = []
    where: dict[str, dict[str, set[str]]] = {}  # reason -> row -> the columns of its cells
    for cell in cells:
        column = cell.column if cell.column in key_of else None
        if cell.ours is not None or column is None:
            out.append(cell)
            continue
        reason = _why(plan, key_of[column], memory_of[cell.row])
        where.setdefault(reason, {}).setdefault(cell.row, set()).add(column)
        # no run, so no episodes and no coverage marker (a fixture § on "n/a" says nothing)
        out.append(replace(cell, ours=f"n/a: {short_reason(reason)}", coverage="", episodes=None))
    notes = [
        f"n/a: {reason} -- "
        + "; ".join(f"{row} @ {', '.join(sorted(cols))}" for row, cols in rows.items())
        for reason, rows in where.items()
    ]
    return out, notes


def _episodes_header(settings: Sequence[Mapping[str, Any]]) -> str:
    return "; ".join(
        f"{s['label']}: {s['episodes']} (asked {s['episodes_asked'] or 'all'})" for s in settings
    )


def matrix_table(spec: TableSpec, ctx: TableContext) -> BuiltTable:
    """Methods x settings for the table's metrics (module docstring)."""
    plan = load_plan(ctx.results_dir, spec.tag)
    metrics = set(spec.need("metrics"))
    settings = [s for s in plan["settings"] if metrics & set(s["metrics"])]
    if not settings:
        raise spec.error("metrics", f"no setting of the matrix reports {sorted(metrics)}")
    options = dict(spec.options or {})
    if (reference := _reference(plan)) is not None:
        options.setdefault("reference_row", reference)
    # each setting is its own experiment: its tests form their own Holm family
    options["significance"] = {"family": "column", **dict(options.get("significance") or {})}
    derived = replace(
        spec,
        rows=tuple(_rows(plan)),
        columns=tuple(_columns(_plan_path(ctx.results_dir, spec.tag), settings)),
        options=options,
    )
    built = summary_table(derived, ctx)
    cells, notes = explain_empty(built.cells, plan, settings)
    built.cells = cells
    built.notes = [*built.notes, *notes]
    built.header = {
        **built.header,
        "episodes per setting": _episodes_header(settings) + " (sampled with seed 0)",
    }
    return built


# -- quality vs cost --------------------------------------------------------------------------


def _tokens(run: RunRecord, stage: str) -> float | None:
    """Prompt + completion tokens of ``stage`` per episode of the run (None: no usage.json)."""
    if run.usage is None:
        return None
    n = run.provenance.n_episodes or 0
    bucket = run.usage.stage(stage)
    total = bucket.count("prompt_tokens") + bucket.count("completion_tokens")
    return total / n if n else None


def _quality_metric(setting: Mapping[str, Any], quality: Sequence[str]) -> str | None:
    return next((m for m in quality if m in setting["metrics"]), None)


def _cost_cells(
    spec: TableSpec,
    ctx: TableContext,
    plan: Mapping[str, Any],
    settings: Sequence[Mapping[str, Any]],
    quality_cells: Sequence[Cell],
) -> list[Cell]:
    """Per (method, setting): the quality cell, then the write and answer tokens per episode."""
    labels = spec.need("metrics")
    columns = {c.label: c for c in _columns(_plan_path(ctx.results_dir, spec.tag), settings)}
    by_place = {(c.row, c.column): c for c in quality_cells}
    out = []
    for row in _rows(plan):
        for label, column in columns.items():
            quality = by_place.get((row.label, label))
            if quality is not None:
                out.append(replace(quality, metric=labels["quality"].label_or("Quality")))
            matched = select(select(ctx.runs, row.select), column.select)
            for name, stage in STAGES.items():
                spent = [t for r in matched if (t := _tokens(r, stage)) is not None]
                mspec = labels[name]
                out.append(
                    Cell(
                        row.label,
                        label,
                        mspec.label_or(name),
                        sum(spent) / len(spent) if spent else None,
                        None,
                        len(spent),
                        mspec.digits_or(0),
                    )
                )
    return out


def matrix_cost(spec: TableSpec, ctx: TableContext) -> BuiltTable:
    """Quality, write tokens and answer tokens per episode, per method and setting."""
    plan = load_plan(ctx.results_dir, spec.tag)
    quality = [str(q) for q in spec.option("quality")]
    if set(spec.need("metrics")) != {"quality", "write", "answer"}:
        raise spec.error("metrics", "expected exactly quality, write and answer")
    settings = [s for s in plan["settings"] if _quality_metric(s, quality)]
    quality_cells: list[Cell] = []
    row_runs: dict[str, list[RunRecord]] = {}  # the memory activity behind identical rows
    notes = []
    path = _plan_path(ctx.results_dir, spec.tag)
    for setting in settings:
        metric = _quality_metric(setting, quality)
        sub = replace(
            spec,
            metrics={str(metric): spec.need("metrics")["quality"]},
            options={"value": setting["place"].get("value", "value")},
        )
        single = summary_table(
            replace(sub, rows=tuple(_rows(plan)), columns=tuple(_columns(path, [setting]))), ctx
        )
        quality_cells += single.cells
        for row, runs in single.row_runs.items():
            row_runs.setdefault(row, []).extend(runs)
        notes.append(f"quality of {setting['label']}: {metric}")
    cells, why = explain_empty(
        _cost_cells(spec, ctx, plan, settings, quality_cells), plan, settings
    )
    header = {
        "episodes per setting": _episodes_header(settings) + " (sampled with seed 0)",
        "cost": "tokens per episode (prompt + completion) of usage.json's stages: write = "
        "'memory' (building memory), answer = 'answer' (recall-time work and the reply); judging "
        "is evaluation and not counted; no interval (usage.json is per run, not per episode); "
        "the extractive backend's counts are the tokens its prompts and replies would bill",
    }
    return BuiltTable(cells, header=header, notes=[*notes, *why], show_n=False, row_runs=row_runs)
