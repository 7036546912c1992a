"""Pareto frontiers of quality vs cost / time and their PNG plots (THEANINE Figs. 9-10, Table 7).

A method is Pareto-efficient when no other method is at most as costly (or slow) and at least as
good, and strictly better in one of the two. Plots are written with matplotlib's Agg backend
(headless): points labelled by method, the frontier as a step line, efficient points filled.

    efficient = pareto_front({"THEANINE": (0.0135, 41.5), "Memory Retrieval": (0.0023, 22.1)})
    plot_pareto(points, "API cost per episode (USD)", "Mauve", "Cost-performance", "fig9.png")
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from recallbench.io import atomic_path

Point = tuple[float, float]  # (cost or time: lower is better, quality: higher is better)


def _check(points: Mapping[str, Point]) -> None:
    for label, (x, y) in points.items():
        if not (math.isfinite(x) and math.isfinite(y)):
            raise ValueError(f"pareto point {label!r} is not finite: ({x}, {y})")


def pareto_front(points: Mapping[str, Point]) -> dict[str, bool]:
    """Return label -> efficient (minimize x, maximize y); ties on both are all efficient."""
    _check(points)
    out = {}
    for label, (x, y) in points.items():
        dominated = any(
            ox <= x and oy >= y and (ox < x or oy > y)
            for other, (ox, oy) in points.items()
            if other != label
        )
        out[label] = not dominated
    return out


def plot_pareto(
    points: Mapping[str, Point],
    xlabel: str,
    ylabel: str,
    title: str,
    path: str | Path,
    *,
    note: str = "",
) -> Path:
    """Scatter ``points`` with the Pareto frontier and save it (a PNG also as PDF); return
    ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not points:
        raise ValueError(f"{path}: no points to plot")
    efficient = pareto_front(points)
    fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=120)
    try:
        for label, (x, y) in points.items():
            ax.scatter(
                [x],
                [y],
                s=40,
                color="tab:red" if efficient[label] else "white",
                edgecolors="tab:red" if efficient[label] else "tab:gray",
                zorder=3,
            )
            ax.annotate(label, (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
        front = sorted((p for lbl, p in points.items() if efficient[lbl]), key=lambda p: p[0])
        if draw_front(ax, front):
            ax.legend(fontsize=7, loc="lower right")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=9)
        if note:
            fig.text(0.01, -0.03, note, fontsize=6, color="dimgray")
        ax.grid(alpha=0.3)
        path = Path(path)
        for out in (path, path.with_suffix(".pdf")) if path.suffix == ".png" else (path,):
            with atomic_path(out) as tmp:  # a PNG gets its PDF beside
                fig.savefig(tmp, bbox_inches="tight")
    finally:
        plt.close(fig)
    return path


def draw_front(ax: Any, front: list[tuple[float, float]]) -> bool:
    """Draw the Pareto frontier through ``front`` (points sorted by x) as a red step line;
    return whether there was one to draw (two points or more)."""
    if len(front) > 1:
        ax.step(
            [p[0] for p in front],
            [p[1] for p in front],
            where="post",
            color="tab:red",
            linewidth=1,
            alpha=0.7,
            label="Pareto frontier",
        )
    return len(front) > 1
