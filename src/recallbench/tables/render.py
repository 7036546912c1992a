"""Render paper tables with our values beside the papers' reference values.

One generic renderer serves every table: a list of :class:`Cell` (``tables.cell``: row x
column, ours with its interval and test, paper, n) becomes
``results/tables/<paper>_<id>.{md,tex,csv}`` (ids: ``table3``, ``figure11``). md and tex keep the
paper's layout (rows x columns, each cell ``ours [ci] (paper; ours - paper)``, see
``tables.cell.format_cell``) under a header that names whatever the caller passes (generator,
judge, embedder, data, episode counts, comparability ...); the csv is tidy, one line per cell
(``tables.cell.CSV_COLUMNS``: ``row,column,metric,ours,paper,diff,n,episodes,ci_low,ci_high,
p_value,p_holm,significant,comparable,coverage,seed_sd,seeds``). A missing value is shown as
``n/a`` (ours not computable here) or ``—`` (the paper reports none), never invented.

Reference values live in ``papers/<paper>/reference.yaml`` (package data), one top-level key per
table (``table1:`` ...), each with a ``source:`` note naming the paper and table.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from recallbench.errors import did_you_mean
from recallbench.io import write_text
from recallbench.tables.cell import LEGEND, NA, Cell, Value, cells_csv, format_cell, legend
from recallbench.tables.cell import _ours as ours_text

__all__ = [
    "PAPERS_DIR",
    "Cell",
    "format_cell",
    "load_reference",
    "paper_values",
    "reference_table",
    "reference_value",
    "render",
    "table_id",
]

PAPERS_DIR = Path(__file__).resolve().parents[1] / "papers"  # papers/<paper>/reference.yaml
ID_FORMAT = re.compile(r"(table|figure)[0-9A-Za-z_]+")
OWN_LEGEND = "Each cell: ours. n/a = not computable here."


def table_id(value: int | str) -> str:
    """Return the one id format, ``table<n>`` or ``figure<n>`` (``3`` and ``"3"`` mean table3)."""
    text = str(value)
    if text.isdigit():
        return f"table{text}"
    if not ID_FORMAT.fullmatch(text):
        raise ValueError(f"table id {value!r}: expected table<n> or figure<n> (e.g. table3)")
    return text


@dataclass(frozen=True)
class _Grid:
    """Cells laid out as rows x display columns.

    A column keeps one display column unless some row has several metrics in it (THEANINE:
    column "MSC" with bleu4, rouge_l ...); then it gets one display column per metric.
    """

    rows: list[str]
    keys: list[tuple[str, str | None]]  # (column, metric or None when the column is not split)
    cells: dict[tuple[str, str, str | None], Cell]
    show_n: bool
    corner: str

    text: Callable[[Cell], str] = format_cell  # a cell's text (ours only: a user's own table)

    @classmethod
    def build(
        cls,
        cells: Sequence[Cell],
        show_n: bool,
        corner: str,
        text: Callable[[Cell], str] = format_cell,
    ) -> _Grid:
        seen: set[tuple[str, str, str]] = set()
        per_pair: dict[tuple[str, str], int] = {}
        for cell in cells:
            key = (cell.row, cell.column, cell.metric)
            if key in seen:
                where = f"row {cell.row!r}, column {cell.column!r}, metric {cell.metric!r}"
                raise ValueError(f"two cells for {where}")
            seen.add(key)
            per_pair[cell.row, cell.column] = per_pair.get((cell.row, cell.column), 0) + 1
        split = {column for (_, column), count in per_pair.items() if count > 1}
        grid = {(c.row, c.column, c.metric if c.column in split else None): c for c in cells}
        keys = list(dict.fromkeys((col, metric) for _, col, metric in grid))
        rows = list(dict.fromkeys(c.row for c in cells))
        return cls(rows, keys, grid, show_n, corner, text)

    def heads(self) -> list[str]:
        """Header texts: corner, one per display column ("MSC / bleu4" when split), n."""
        names = [
            column if metric is None else f"{column} / {metric}" for column, metric in self.keys
        ]
        return [self.corner, *names, *(["n"] if self.show_n else [])]

    def texts(self, row: str) -> list[str]:
        """The row label, each cell's text ('' where the row has no cell) and the row's n."""
        found = [self.cells.get((row, column, metric)) for column, metric in self.keys]
        texts = [row] + [self.text(cell) if cell else "" for cell in found]
        if self.show_n:
            ns = {cell.n for cell in found if cell and cell.n is not None and cell.ours is not None}
            texts.append(NA if not ns else f"{ns.pop():,}" if len(ns) == 1 else "varies (csv)")
        return texts


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def _markdown(
    title: str, header: dict[str, Any], notes: Sequence[str], grid: _Grid, key: str
) -> str:
    lines = [f"# {title}", ""]
    if header:
        lines += [f"- **{key}**: {value}" for key, value in header.items()] + [""]
    heads = grid.heads()
    lines += ["| " + " | ".join(map(_md_escape, heads)) + " |", "|---" * len(heads) + "|"]
    for row in grid.rows:
        lines.append("| " + " | ".join(map(_md_escape, grid.texts(row))) + " |")
    lines += ["", key]
    lines += [f"- {note}" for note in notes]
    return "\n".join(lines) + "\n"


_TEX_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "—": "---",
    "|": r"\textbar{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}


def tex_escape(text: str) -> str:
    """Escape LaTeX special characters in ``text``."""
    return "".join(_TEX_ESCAPES.get(ch, ch) for ch in str(text))


def _latex(
    title: str, header: dict[str, Any], notes: Sequence[str], grid: _Grid, label: str, key: str
) -> str:
    lines = ["% Generated by recallbench.tables.render; do not edit by hand."]
    lines += [f"% {key}: {value}" for key, value in header.items()]
    lines += [r"\begin{table}[t]", r"\centering", r"\small"]
    heads = grid.heads()
    lines += [r"\begin{tabular}{l" + "r" * (len(heads) - 1) + "}", r"\toprule"]
    lines += [" & ".join(map(tex_escape, heads)) + r" \\", r"\midrule"]
    for row in grid.rows:
        lines.append(" & ".join(map(tex_escape, grid.texts(row))) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    caption = [title, *(f"{k}: {v}." for k, v in header.items()), key, *notes]
    lines.append(r"\caption{" + tex_escape(" ".join(caption)) + "}")
    lines += [r"\label{tab:" + label + "}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def table_stem(paper: str | None, table: str | int) -> str:
    """The file stem of a table: ``<paper>_<table id>``, or a user's own table's id."""
    return str(table) if paper is None else f"{paper}_{table_id(table)}"


def render(
    cells: Sequence[Cell],
    *,
    paper: str | None,
    table: int | str,
    title: str,
    header: Mapping[str, object],
    out_dir: str | Path,
    notes: Sequence[str] = (),
    show_n: bool = True,
    corner: str = "",
) -> dict[str, Path]:
    """Write ``<out_dir>/<paper>_<table id>.{md,tex,csv}`` and return {format: path}.

    Rows and columns appear in the order of their first cell; a column where some row has
    several metrics becomes one display column per metric ("MSC / bleu4"). ``header`` items
    are printed above the table (md) or in the caption (tex); ``notes`` below it. ``show_n``
    adds a last column with each row's n (when its cells with a value share one); the csv always
    has n.
    ``corner`` names the row-label column (e.g. "Dataset"). Without a ``paper`` (a user's own
    table) the file is ``<out_dir>/<table>.*`` and cells show ours only.
    """
    if not cells:
        raise ValueError(f"{paper or 'own'} table {table}: no cells to render")
    if paper is None:
        grid = _Grid.build(cells, show_n, corner, text=ours_text)
        ident = str(table)
        key = legend(cells).replace(LEGEND, OWN_LEGEND)
    else:
        grid = _Grid.build(cells, show_n, corner)
        ident = table_id(table)  # 1, "1" and "table1" name the same file
        key = legend(cells)
    stem = table_stem(paper, table)
    header = {str(k): str(v) for k, v in header.items()}
    texts = {
        "md": _markdown(title, header, notes, grid, key),
        "tex": _latex(title, header, notes, grid, f"{paper or 'own'}-{ident}", key),
        "csv": cells_csv(cells),
    }
    paths = {fmt: Path(out_dir) / f"{stem}.{fmt}" for fmt in texts}
    for fmt, text in texts.items():
        write_text(paths[fmt], text)
    return paths


def load_reference(paper: str) -> dict[str, Any]:
    """Load the paper's published numbers from ``papers/<paper>/reference.yaml``."""
    available = sorted(p.parent.name for p in PAPERS_DIR.glob("*/reference.yaml"))
    path = PAPERS_DIR / paper / "reference.yaml"
    if not path.is_file():
        raise did_you_mean("reference paper", paper, available)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of tables, got {type(data).__name__}")
    return data


def reference_table(paper: str, table: int | str) -> dict[str, Any]:
    """Return the ``table<n>`` (or ``figure<n>``) entry of the paper's reference YAML."""
    reference = load_reference(paper)
    key = table_id(table)
    if key not in reference:
        raise did_you_mean(f"table of {paper}", key, reference)
    table_ref: dict[str, Any] = reference[key]
    return table_ref


def paper_values(paper: str, table: str) -> Mapping[str, object]:
    """Return the ``values:`` of a table's entry in the paper's reference YAML ({} when absent)."""
    entry = load_reference(paper).get(table) or {}
    values = entry.get("values") if isinstance(entry, Mapping) else None
    return values if isinstance(values, Mapping) else {}


def reference_value(
    values: Mapping[str, object], row: str, column: str, metric: str | None = None
) -> Value:
    """Return the paper's ``values[row][column][metric]`` (``values[row][column]`` without a
    metric); None when the paper reports none (a key absent at any level)."""
    found: object = values
    for key in (row, column) if metric is None else (row, column, metric):
        if found is None:
            return None
        if not isinstance(found, Mapping):
            raise ValueError(f"reference values: at {key!r}: expected a mapping, got {found!r:.80}")
        found = found.get(key)
    if found is not None and not isinstance(found, int | float | str):
        where = "/".join(k for k in (row, column, metric) if k is not None)
        raise ValueError(f"reference values: {where}: expected a number, got {found!r:.80}")
    return found
