"""Draw a paper figure from table cells: PNG and PDF beside the table's md/csv/tex.

A table experiment whose ``table:`` block has a ``figure:`` mapping also gets
``results/tables/<paper>_<id>.{png,pdf}`` (or ``<file>.{png,pdf}``), drawn with matplotlib
(Agg, no pyplot state) from the same cells the table shows:

    figure:
      kind: line            # line | bar | stacked | scatter | pareto
      x: rows               # rows | columns: which cell label is the x axis (numbers when
                            # every label parses as one, else categories)
      series: metrics       # rows | columns | metrics: one line / bar group member each
      panels: columns       # rows | columns | metrics | null: one subplot each
      x_label: "confidence threshold tau"
      y_label: "score"      # default: the panel's metric when panels are metrics
      log_x: false
      x_metric: Recall      # scatter only: the metric labels on the two axes (a PR curve:
      y_metric: Precision   # one point per x label, joined in x order)
      file: lufy_figure11   # optional file stem (default <paper>_<id>)

``kind: pareto`` (the cross-paper matrix's quality vs cost) draws one point per row (method)
at (``x_metric``, ``y_metric``) in one panel per ``panels`` label and per x metric
(``x_metric`` may list several, comma-separated: one row of panels each), the Pareto-efficient
points filled and joined by the frontier (``analysis.pareto.pareto_front``).

Our values are solid lines with markers (bars), their 95% intervals bands (error bars); the
paper's values, where the reference gives them, are drawn beside ours in the same colour, dashed
with hollow markers (hollow diamonds on bars), labelled "(paper)". Values we could not compute
(``n/a``) are left out, a panel without any value is dropped, and a figure without any value
says so. The caption under the axes repeats the table header's facts (generator, judge,
embedder, data, episodes), so a figure never travels without them.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from recallbench.io import atomic_path
from recallbench.tables._plots import (
    AXES,
    COLORS,
    Colors,
    Point,
    bar,
    line,
    number,
    pareto,
    part,
    scatter,
    stacked,
)
from recallbench.tables.cell import Cell

__all__ = ["FigureSpec", "caption", "draw", "figure_data", "parse_figure", "render_figure"]

KINDS = ("line", "bar", "stacked", "scatter", "pareto")
CAPTION_KEYS = (
    "generator",
    "judge",
    "embedder",
    "data",
    "episodes",
    "code",
    "comparability",
)
# Also written into the image files' metadata (PNG text chunks, PDF keywords), so a check can
# read which runs and code a figure came from without reading its pixels.
METADATA_KEYS = ("code", "runs")


@dataclass(frozen=True)
class FigureSpec:
    """The ``figure:`` mapping of a table block (module docstring)."""

    kind: str = "line"
    x: str = "rows"
    series: str = "metrics"
    panels: str | None = None
    x_label: str = ""
    y_label: str = ""
    log_x: bool = False
    x_metric: str = ""
    y_metric: str = ""
    file: str = ""
    title: str = ""  # the figure's own title when it is another of the paper's results


def parse_figure(value: object) -> FigureSpec:
    """Validate a ``figure:`` mapping; a ValueError names the key, what was expected and got."""
    if not isinstance(value, Mapping):
        raise ValueError(f"expected a mapping (kind, x, series, ...), got {value!r}")
    known = {f.name for f in fields(FigureSpec)}
    if unknown := sorted(set(value) - known):
        raise ValueError(f"unknown keys {unknown} (options: {sorted(known)})")
    spec = FigureSpec(**{k: v for k, v in value.items() if v is not None or k == "panels"})
    if spec.kind not in KINDS:
        raise ValueError(f"kind: expected one of {KINDS}, got {spec.kind!r}")
    for key in ("x", "series", "panels"):
        got = getattr(spec, key)
        if got is not None and got not in AXES:
            raise ValueError(f"{key}: expected one of {AXES}, got {got!r}")
    used = [spec.x, spec.series, spec.panels]
    if spec.kind not in ("scatter", "pareto") and len({u for u in used if u}) < len(
        [u for u in used if u]
    ):
        raise ValueError(f"x, series and panels must name different axes, got {used}")
    if spec.kind in ("scatter", "pareto") and not (spec.x_metric and spec.y_metric):
        raise ValueError(f"a {spec.kind} figure needs x_metric and y_metric")
    return spec


def figure_data(cells: Sequence[Cell], spec: FigureSpec) -> dict[str, dict[str, list[Point]]]:
    """``{panel: {series: [points in cell order]}}``; panels and series without a value go."""
    data: dict[str, dict[str, list[Point]]] = {}
    for cell in cells:
        point = Point(
            part(cell, spec.x),
            number(cell.ours),
            number(cell.ci_low),
            number(cell.ci_high),
            number(cell.paper),
        )
        panel = data.setdefault(part(cell, spec.panels), {})
        panel.setdefault(part(cell, spec.series), []).append(point)
    return {
        panel: kept
        for panel, series in data.items()
        if (kept := {s: ps for s, ps in series.items() if _has_value(ps)})
    }


def _has_value(points: Sequence[Point]) -> bool:
    return any(p.y is not None or p.paper is not None for p in points)


def _numeric(labels: Sequence[str]) -> bool:
    try:
        [float(x) for x in labels]
    except ValueError:
        return False
    return bool(labels)


def caption(header: Mapping[str, str], width: int = 120) -> str:
    """The header's provenance facts as wrapped caption lines."""
    facts = [f"{k}: {header[k]}" for k in CAPTION_KEYS if header.get(k)]
    return "\n".join(textwrap.fill(fact, width) for fact in facts)


def _axes_for(fig: Figure, n: int) -> list[Axes]:
    cols = min(n, 3)
    rows = (n + cols - 1) // cols
    fig.set_size_inches(4.6 * cols, 3.4 * rows + 0.9)
    return [fig.add_subplot(rows, cols, i + 1) for i in range(n)]


def draw(cells: Sequence[Cell], spec: FigureSpec, title: str, caption_text: str = "") -> Figure:
    """Return the matplotlib Figure of ``cells`` under ``spec`` (module docstring)."""
    fig = Figure(dpi=120)
    if spec.kind == "pareto":
        axes = _pareto_axes(fig, cells, spec)
    elif spec.kind == "scatter":
        (ax,) = _axes_for(fig, 1)
        scatter(ax, cells, spec.x, spec.series, spec.x_metric, spec.y_metric)
        ax.set_xlabel(spec.x_label or spec.x_metric)
        ax.set_ylabel(spec.y_label or spec.y_metric)
        axes = [(ax, "")]
    else:
        panels = figure_data(cells, spec)
        names = dict.fromkeys(name for series in panels.values() for name in series)
        colors = {name: COLORS[i % len(COLORS)] for i, name in enumerate(names)}
        axes = list(zip(_axes_for(fig, max(1, len(panels))), panels or [""], strict=False))
        for ax, panel in axes:
            _panel(ax, panel, panels.get(panel, {}), spec, colors)
    for ax, _ in axes:
        if not ax.has_data():
            ax.text(0.5, 0.5, "n/a: no values to plot", ha="center", transform=ax.transAxes)
        elif ax.get_legend_handles_labels()[1]:
            ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    fig.suptitle(textwrap.fill(title, 110), fontsize=9)
    if caption_text:
        fig.text(0.01, 0.0, caption_text, fontsize=6, color="dimgray", va="top", ha="left")
    fig.tight_layout()
    return fig


def _pareto_axes(fig: Figure, cells: Sequence[Cell], spec: FigureSpec) -> list[Any]:
    """One panel per (x metric, ``panels`` label): quality against that cost."""
    costs = [m.strip() for m in spec.x_metric.split(",") if m.strip()]
    names = list(dict.fromkeys(part(c, spec.panels) for c in cells))
    fig.set_size_inches(3.6 * max(1, len(names)), 3.0 * len(costs) + 0.9)
    axes = []
    for i, cost in enumerate(costs):
        for j, name in enumerate(names):
            ax = fig.add_subplot(len(costs), max(1, len(names)), i * len(names) + j + 1)
            pareto(
                ax, [c for c in cells if part(c, spec.panels) == name], spec.x, cost, spec.y_metric
            )
            ax.set_xlabel(f"{cost} ({spec.x_label})" if spec.x_label else cost, fontsize=7)
            ax.set_ylabel(spec.y_label or spec.y_metric, fontsize=7)
            ax.set_title(name, fontsize=7)
            axes.append((ax, name))
    return axes


def _panel(
    ax: Axes, name: str, series: Mapping[str, list[Point]], spec: FigureSpec, colors: Colors
) -> None:
    labels = list(dict.fromkeys(p.x for points in series.values() for p in points))
    numeric = _numeric(labels) and spec.kind == "line"
    positions = {x: float(x) if numeric else float(i) for i, x in enumerate(labels)}
    {"line": line, "bar": bar, "stacked": stacked}[spec.kind](ax, series, positions, colors)
    horizontal = spec.kind == "stacked"  # categories on the y axis, the first on top
    if horizontal:
        ax.invert_yaxis()
    set_labels, set_values = (
        (ax.set_ylabel, ax.set_xlabel)
        if horizontal
        else (
            ax.set_xlabel,
            ax.set_ylabel,
        )
    )
    if spec.log_x and numeric:
        ax.set_xscale("log")
    if not numeric or len(labels) <= 12:  # every x value gets its own tick, as the paper's
        ticks = ax.set_yticks if horizontal else ax.set_xticks
        rotate = 20 if not (numeric or horizontal) else 0
        ticks(list(positions.values()), labels, fontsize=7, rotation=rotate)
    set_labels(spec.x_label or spec.x)
    set_values(spec.y_label or (name if spec.panels == "metrics" else "value"))
    if name:
        ax.set_title(name, fontsize=8)


def render_figure(
    cells: Sequence[Cell],
    spec: FigureSpec,
    *,
    stem: str,
    title: str,
    header: Mapping[str, str],
    out_dir: str | Path,
) -> dict[str, Path]:
    """Write ``<out_dir>/<stem>.{png,pdf}`` (``spec.file`` overrides the stem); return paths."""
    fig = draw(cells, spec, spec.title or title, caption(header))
    stem = spec.file or stem
    paths = {fmt: Path(out_dir) / f"{stem}.{fmt}" for fmt in ("png", "pdf")}
    facts = "; ".join(f"{k}: {header[k]}" for k in METADATA_KEYS if header.get(k))
    metadata = {"png": {"Description": facts}, "pdf": {"Keywords": facts}}
    for fmt, path in paths.items():
        with atomic_path(path) as tmp:
            fig.savefig(tmp, bbox_inches="tight", format=fmt, metadata=metadata[fmt])
    return paths
