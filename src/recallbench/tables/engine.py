"""Render an experiment's paper table: spec -> runs -> builder -> md/tex/csv.

    spec = load_spec("lufy_table3")                  # conf/experiment/lufy_table3.yaml, table:
    reproduce(spec, TableContext(results_dir="results"))

``reproduce`` reads the newest finished run of every job under ``results/runs/<tag>`` of the
experiment named by ``table.runs`` (none when ``runs: null``), calls the builder named by
``table.builder`` (a dotted path resolved at run time, so ``tables`` never imports ``papers``;
default: the summary-cell builder, ``recallbench.tables.cells``) and renders its cells with a
header naming the generator, embedder, judge, data and runs every cell came from, the table's
``notes`` and the paper's own remarks from its reference (significance marks, quirks).

A builder is ``builder(spec: TableSpec, ctx: TableContext) -> BuiltTable``. What needs a model
(an LLM, a judge, an embedder) comes from the factories in ``ctx``, which only the table command
(``recallbench.cli.table_main``) fills: nothing here or in ``papers`` constructs one.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from recallbench.analysis import find_runs, latest_per_job
from recallbench.errors import DataNotFoundError, did_you_mean
from recallbench.run.provenance import describe_code, describe_deviations, git_state
from recallbench.run.read import RunRecord
from recallbench.run.record import describe_problems
from recallbench.tables.cell import FEWER, FIXTURE
from recallbench.tables.comparability import FIXTURE_REASON, Setting, is_fixture
from recallbench.tables.context import BuiltTable, TableContext
from recallbench.tables.figure import parse_figure, render_figure
from recallbench.tables.render import Cell, load_reference, paper_values, render
from recallbench.tables.sameness import sameness_notes
from recallbench.tables.sources import source_runs
from recallbench.tables.spec import TableSpec

__all__ = [
    "BuiltTable",
    "TableContext",
    "assess",
    "header_for",
    "paper_setting",
    "reference_values",
    "reproduce",
    "resolve_builder",
    "table_runs",
]


def resolve_builder(spec: TableSpec) -> Callable[[TableSpec, TableContext], BuiltTable]:
    """Import the builder named by ``table.builder`` (errors name the file and the key)."""
    module_name, _, name = spec.builder.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise spec.error("builder", f"no module {module_name!r} ({exc})") from None
    if not callable(builder := getattr(module, name, None)):
        options = [k for k, v in vars(module).items() if callable(v) and not k.startswith("_")]
        raise spec.error("builder", str(did_you_mean(f"builder in {module_name}", name, options)))
    typed: Callable[[TableSpec, TableContext], BuiltTable] = builder  # a module attribute: Any
    return typed


def table_runs(spec: TableSpec, results_dir: str | Path) -> list[RunRecord]:
    """Return the newest finished run of every job of the experiment ``table.runs`` (or of
    every (tag, job) under its tags and folders)."""
    if spec.runs is None:
        return []
    if spec.tags or spec.folders:  # runs: {tag: ..., folder: ...}
        runs = source_runs(spec.tags, spec.folders, results_dir, str(spec.path))
        if not runs:
            raise DataNotFoundError(
                f"{spec.experiment}: no finished runs for table.runs ({spec.runs}) under "
                f"{results_dir}/runs"
            )
        return runs
    runs = list(latest_per_job(find_runs(results_dir, spec.tag)).values())
    if not runs:
        raise DataNotFoundError(
            f"{spec.experiment}: no finished runs under {results_dir}/runs/{spec.tag}: run the "
            f"sweep first (`recallbench -m experiment={spec.runs}` or its make target)"
        )
    return runs


def reference_values(spec: TableSpec) -> Mapping[str, object]:
    """Return the paper's values of this table, ``{row: {column: {metric: value}}}`` (read one
    with ``tables.render.reference_value``)."""
    if spec.paper is None:  # the user's own table: nothing to compare with
        return {}
    return paper_values(spec.paper, spec.id)


def paper_setting(spec: TableSpec) -> Setting:
    """The paper's setting and episodes of this table (``tables.comparability``)."""
    if spec.paper is None:
        return Setting.of({}, f"{spec.path}: own table")
    entry = load_reference(spec.paper).get(spec.id, {})
    return Setting.of(entry, f"papers/{spec.paper}/reference.yaml: {spec.id}")


def assess(
    cells: Sequence[Cell], setting: Setting, runs: Sequence[RunRecord], fixture: bool
) -> tuple[list[Cell], list[str]]:
    """Decide what a builder left open: comparability (None) and coverage ("") of each cell.

    Without a declared setting no cell is comparable (``None``: not assessed, no difference).
    A builder's own decision stands otherwise, but no cell on the fixtures is comparable.
    Coverage: ``fixture`` (the table read the project's fixtures) or fewer episodes than the
    paper's, on values only: a text cell (a label, ``n/a: <why>``) gets no marker.
    """
    out, reasons = [], []
    for cell in cells:
        comparable, coverage = cell.comparable, cell.coverage
        if not setting.declared:
            comparable = None
        elif fixture and comparable:  # a builder's own "comparable" never covers fixtures
            comparable = False
            reasons.append(FIXTURE_REASON)
        elif comparable is None:
            why = setting.reasons(runs, cell.metric, label=cell.metric)
            why += setting.data_reasons(cell.episodes, cell.column, cell.row)
            why += [FIXTURE_REASON] if fixture and FIXTURE_REASON not in why else []
            reasons += why
            comparable = not why
        if not coverage and isinstance(cell.ours, int | float):  # a value computed from runs
            if fixture:
                coverage = FIXTURE
            elif cell.episodes is not None:
                paper = setting.paper_episodes(cell.column, cell.row)
                coverage = FEWER if paper is not None and cell.episodes < paper else ""
        out.append(replace(cell, comparable=comparable, coverage=coverage))
    return out, reasons


def reference_notes(spec: TableSpec) -> list[str]:
    """Notes from the reference: the paper's significance marks and its own inconsistencies."""
    if spec.paper is None:
        return []
    entry = load_reference(spec.paper).get(spec.id, {})
    notes = []
    if marks := entry.get("significant") or []:
        cells = ", ".join(f"{r} {c}" for r, c in marks)
        notes.append(f"paper marks p < 0.05 (paired t-test, better than both others) at: {cells}")
    notes += [f"paper quirk: {q}" for q in entry.get("quirks") or []]
    return notes


def header_for(runs: Sequence[RunRecord]) -> dict[str, str]:
    """Name the generator, embedder, judge and data every cell came from."""

    def collect(fn: Callable[[RunRecord], Any]) -> str:
        return ", ".join(sorted({str(fn(r)) for r in runs})) or "n/a"

    def generator(r: RunRecord) -> str:
        gen = r.config.generator
        label = f"{gen.backend}:{gen.model}"
        return label + describe_deviations(r.provenance.log.generator, gen.settings)

    def data(r: RunRecord) -> str:
        ds = r.config.dataset
        sha = r.provenance.dataset_sha256
        return data_label(str(ds.name), ds.get("options"), sha, ds.data_dir)

    return {
        "generator": collect(generator),
        "embedder": collect(lambda r: r.config.embedder.kind),
        "judge": collect(lambda r: r.choice("judge") or "none"),
        "data": collect(data),
        "episodes": collect(lambda r: r.provenance.n_episodes),
        "code": collect(lambda r: describe_code(r.provenance.log.code)),
        "runs": collect(lambda r: f"{r.tag}/{r.stamp}"),
    }


def data_label(
    name: str, options: Any = None, sha256: str | None = None, data_dir: Any = None
) -> str:
    """A dataset as a table header names it: name, options and content hash, never its path
    (paths differ per machine, leak local folders and make every regeneration a diff); the
    project's own fixtures are said to be fixtures."""
    fixtures = data_dir is not None and "fixtures" in Path(str(data_dir)).parts
    if isinstance(options, Mapping):  # an option that is a file of the user's: its name only
        options = {
            k: Path(v).name if isinstance(v, str) and Path(v).is_absolute() else v
            for k, v in options.items()
        }
    parts = [name, "(project fixtures)" if fixtures else "", str(options) if options else ""]
    parts.append(f"sha256:{sha256[:12]}" if sha256 else "")
    return " ".join(p for p in parts if p)


def degraded_notes(runs: Sequence[RunRecord]) -> list[str]:
    """One note per ``degraded`` run: its job and the tasks that failed to parse (run.json)."""
    notes = []
    for run in runs:
        if run.status != "degraded":
            continue
        problems = [dict(p) for p in run.provenance.health]
        notes.append(
            f"DEGRADED run {run.job} ({run.tag}/{run.stamp}): {describe_problems(problems)}; "
            "its cells rest on fallback values"
        )
    return notes


UNTESTED = (
    "no test between rows: this table declares no paired test (no reference_row), so no "
    "difference between two of its rows is tested; the rows are described side by side, and "
    "a gap between them is not evidence that one differs from another"
)


def untested_notes(spec: TableSpec, built: BuiltTable, cells: Sequence[Cell]) -> list[str]:
    """``UNTESTED`` for a table that compares rows of ours without a test: it names rows (in
    its spec, or rows its builder maps to runs), two or more of them hold a value of ours, and
    neither the spec nor the builder declares a test; a builder that tested some pairs only
    (``BuiltTable.tested`` names them) gets the note for the other pairs."""
    if built.tested is True or spec.option("reference_row", None) is not None:
        return []
    if len(spec.rows) < 2 and len(built.row_runs) < 2:
        return []  # rows that are not systems (a dataset's statistics, fitted weights)
    valued = {c.row for c in cells if isinstance(c.ours, int | float)}
    if len(valued) < 2:
        return []
    if built.tested:  # some pairs only
        return [
            f"no test between rows beyond {built.tested}: no other pair of its rows is tested, "
            "and a gap between them is not evidence that one differs from another"
        ]
    return [UNTESTED]


def _fixture_dir(data_dir: Path | None) -> bool:
    """Whether a table that reads no runs read the project's fixtures."""
    return data_dir is not None and "fixtures" in Path(data_dir).parts


def reproduce(spec: TableSpec, ctx: TableContext) -> dict[str, Path]:
    """Build and render ``spec``'s table; return {format: path} of every file written."""
    runs = table_runs(spec, ctx.results_dir)
    built = resolve_builder(spec)(spec, replace(ctx, runs=tuple(runs)))
    used = list(built.runs or runs)
    setting = paper_setting(spec)
    fixture = all(is_fixture(r) for r in used) if used else _fixture_dir(ctx.data_dir)
    cells, reasons = assess(built.cells, setting, used, fixture)
    header = header_for(used) if spec.runs is not None else {}
    header.update(built.header)
    if spec.runs is None:  # computed now from data or ratings: the code is this checkout's
        header.setdefault("code", describe_code(git_state()))
    if "comparability" not in header and any(c.ours is not None for c in cells):
        reasons = [*built.reasons, *reasons]
        if not reasons and any(c.comparable is False and c.ours is not None for c in cells):
            reasons = [f"the builder {spec.builder} marks cells not comparable (see notes)"]
        header.update(setting.header(reasons))
    for key, text in (spec.notes or {}).items():  # a note never hides a provenance line
        header[f"{key} (note)" if key in header else key] = text
    if spec.paper is None:  # a user's own table has no paper to be comparable with
        header.pop("comparability", None)
    degraded = degraded_notes(built.runs or runs)
    if degraded:
        header["degraded runs"] = f"{len(degraded)} (see notes): their cells are not trustworthy"
    paths = render(
        cells,
        paper=spec.paper,
        table=spec.id,
        title=spec.title,
        header=header,
        out_dir=Path(ctx.results_dir) / "tables",
        notes=[
            *degraded,
            *built.notes,
            *untested_notes(spec, built, cells),
            *sameness_notes(cells, built.row_runs),
            *reference_notes(spec),
        ],
        show_n=built.show_n,
        corner=built.corner,
    )
    if (figure := spec.option("figure", None)) is not None:  # PNG + PDF beside (tables.figure)
        try:
            fig_spec = parse_figure(figure)
        except ValueError as exc:
            raise spec.error("figure", str(exc)) from None
        paths |= render_figure(
            built.cells,
            fig_spec,
            stem=f"{spec.paper}_{spec.id}" if spec.paper else spec.id,  # own table: its id
            title=spec.title,
            header=header,
            out_dir=Path(ctx.results_dir) / "tables",
        )
    return {**paths, **built.files}
