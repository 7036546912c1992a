"""The plot kinds of ``tables.figure``: what one panel draws for line, bar, stacked and scatter
figures (ours solid with intervals, the paper's values beside in the same colour)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from recallbench.tables.cell import Cell

if TYPE_CHECKING:
    from matplotlib.axes import Axes

COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")
AXES = ("rows", "columns", "metrics")


@dataclass(frozen=True)
class Point:
    """One plotted value: x label, ours with its interval, the paper's value."""

    x: str
    y: float | None
    lo: float | None
    hi: float | None
    paper: float | None


def part(cell: Cell, axis: str | None) -> str:
    """The cell's label on ``axis`` (rows, columns, metrics; "" for none)."""
    return {"rows": cell.row, "columns": cell.column, "metrics": cell.metric, None: ""}[axis]


def number(value: object) -> float | None:
    """A plottable number, or None (n/a, a string, a bool)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def at(points: Sequence[Point], positions: Mapping[str, float]) -> list[float]:
    """The x positions of ``points``."""
    return [positions[p.x] for p in points]


def ys(points: Sequence[Point]) -> list[float]:
    """Our values of ``points`` (a point without one is left out)."""
    return [p.y for p in points if p.y is not None]


def papers(points: Sequence[Point]) -> list[float]:
    """The paper's values of ``points`` (a point without one is left out)."""
    return [p.paper for p in points if p.paper is not None]


Colors = Mapping[str, str]


def line(
    ax: Axes, series: Mapping[str, list[Point]], positions: Mapping[str, float], colors: Colors
) -> None:
    for name, points in series.items():
        color = colors[name]
        ours = [p for p in points if p.y is not None]
        if ours:
            ax.plot(at(ours, positions), ys(ours), "-o", color=color, label=name)
            band = [p for p in ours if p.lo is not None and p.hi is not None]
            if band:
                xs = at(band, positions)
                ax.fill_between(
                    xs,
                    [p.lo for p in band if p.lo is not None],
                    [p.hi for p in band if p.hi is not None],
                    color=color,
                    alpha=0.2,
                    linewidth=0,
                )
        paper = [p for p in points if p.paper is not None]
        if paper:
            ax.plot(
                at(paper, positions),
                papers(paper),
                "--o",
                color=color,
                mfc="none",
                label=f"{name} (paper)",
            )


def bar(
    ax: Axes, series: Mapping[str, list[Point]], positions: Mapping[str, float], colors: Colors
) -> None:
    width = 0.8 / max(1, len(series))
    for i, (name, points) in enumerate(series.items()):
        color = colors[name]
        shift = (i - (len(series) - 1) / 2) * width
        ours = [p for p in points if p.y is not None]
        paper = [p for p in points if p.paper is not None]
        if paper:
            ax.scatter(
                [positions[p.x] + shift for p in paper],
                papers(paper),
                marker="D",
                facecolors="none",
                edgecolors=color,
                zorder=3,
                label=f"{name} (paper)",
            )
        if not ours:
            continue
        centers = [x + shift for x in at(ours, positions)]
        errors = [
            [p.y - p.lo if p.y is not None and p.lo is not None else 0.0 for p in ours],
            [p.hi - p.y if p.y is not None and p.hi is not None else 0.0 for p in ours],
        ]
        has_ci = any(p.lo is not None for p in ours)
        ax.bar(
            centers,
            ys(ours),
            width,
            color=color,
            label=name,
            yerr=errors if has_ci else None,
            capsize=3,
        )


def stacked(
    ax: Axes, series: Mapping[str, list[Point]], positions: Mapping[str, float], colors: Colors
) -> None:
    """Horizontal bars of the series stacked per category (win / tie / loss); paper below."""
    left = dict.fromkeys(positions, 0.0)
    paper_left = dict.fromkeys(positions, 0.0)
    for name, points in series.items():
        color = colors[name]
        ours = [p for p in points if p.y is not None]
        ax.barh(
            at(ours, positions),
            ys(ours),
            0.4,
            left=[left[p.x] for p in ours],
            color=color,
            label=name,
        )
        for p in ours:
            if p.y is not None:
                left[p.x] += p.y
        paper = [p for p in points if p.paper is not None]
        if paper:
            ax.barh(
                [positions[p.x] + 0.4 for p in paper],
                papers(paper),
                0.25,
                left=[paper_left[p.x] for p in paper],
                color=color,
                hatch="//",
                alpha=0.5,
                label=f"{name} (paper)",
            )
            for p in paper:
                if p.paper is not None:
                    paper_left[p.x] += p.paper


def _half_widths(cells: Sequence[Cell]) -> list[list[float]] | None:
    """Error-bar half widths [below, above] of the cells' intervals (None: no interval)."""
    below: list[float] = []
    above: list[float] = []
    for c in cells:
        ours = number(c.ours)
        if ours is None or c.ci_low is None or c.ci_high is None:
            return None
        below.append(ours - float(c.ci_low))
        above.append(float(c.ci_high) - ours)
    return [below, above]


def scatter(
    ax: Axes, cells: Sequence[Cell], x: str, series: str, x_metric: str, y_metric: str
) -> None:
    """One curve per series: (x_metric, y_metric) per x label, joined in label order, with
    both intervals as error bars; labels of coinciding points are joined ("0.4/0.5")."""
    by: dict[str, dict[str, dict[str, Cell]]] = {}
    for cell in cells:
        by.setdefault(part(cell, series), {}).setdefault(part(cell, x), {})[cell.metric] = cell
    for i, (name, labels) in enumerate(by.items()):
        color = COLORS[i % len(COLORS)]
        pts = [
            (lbl, m[x_metric], m[y_metric])
            for lbl, m in labels.items()
            if x_metric in m and y_metric in m
        ]
        for which, style, suffix in (("ours", "-o", ""), ("paper", "--o", " (paper)")):
            kept = [
                p
                for p in pts
                if number(getattr(p[1], which)) is not None
                and number(getattr(p[2], which)) is not None
            ]
            if not kept:
                continue
            xs = [float(getattr(a, which)) for _, a, _ in kept]
            ys = [float(getattr(b, which)) for _, _, b in kept]
            face = color if which == "ours" else "none"
            ax.plot(xs, ys, style, color=color, mfc=face, label=f"{name}{suffix}")
            if which == "ours":
                xerr, yerr = (
                    _half_widths([a for _, a, _ in kept]),
                    _half_widths([b for _, _, b in kept]),
                )
                if xerr is not None or yerr is not None:
                    ax.errorbar(xs, ys, xerr=xerr, yerr=yerr, fmt="none", ecolor=color, alpha=0.4)
            names: dict[tuple[float, float], list[str]] = {}
            for (lbl, _, _), px, py in zip(kept, xs, ys, strict=True):
                names.setdefault((px, py), []).append(lbl)
            for (px, py), lbls in names.items():
                ax.annotate(
                    "/".join(lbls), (px, py), textcoords="offset points", xytext=(3, 3), fontsize=7
                )


def pareto(ax: Axes, cells: Sequence[Cell], label: str, x_metric: str, y_metric: str) -> None:
    """Quality (``y_metric``) against a cost (``x_metric``), one point per ``label`` part (a
    method); the Pareto-efficient points (no other point at most as costly and at least as
    good, strictly better in one) filled and joined by the frontier's step line."""
    from recallbench.analysis.pareto import draw_front, pareto_front

    by: dict[str, dict[str, float]] = {}
    for cell in cells:
        if (value := number(cell.ours)) is not None:
            by.setdefault(part(cell, label), {})[cell.metric] = value
    points = {
        k: (m[x_metric], m[y_metric]) for k, m in by.items() if x_metric in m and y_metric in m
    }
    if not points:
        return
    efficient = pareto_front(points)
    for name, (x, y) in points.items():
        on = efficient[name]
        ax.scatter(
            [x],
            [y],
            s=30,
            color="tab:red" if on else "white",
            zorder=3,
            edgecolors="tab:red" if on else "tab:gray",
        )
        ax.annotate(name, (x, y), textcoords="offset points", xytext=(3, 3), fontsize=6)
    front = sorted(p for name, p in points.items() if efficient[name])
    draw_front(ax, front)
