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
    """Scatter ``points`` with the Pareto frontier and save a PNG; return its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not points:
        raise ValueError(f"{path}: no points to plot")
    efficient = pareto_front(points)
    fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=120)
    try:
        for label, (x, y) in points.items():
            ax.scatter([x], [y], s=40, color="tab:red" if efficient[label] else "white",
                       edgecolors="tab:red" if efficient[label] else "tab:gray", zorder=3)  # fmt: skip
            ax.annotate(label, (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
        front = sorted((p for lbl, p in points.items() if efficient[lbl]), key=lambda p: p[0])
        if len(front) > 1:
            ax.step([p[0] for p in front], [p[1] for p in front], where="post",
                    color="tab:red", linewidth=1, alpha=0.7, label="Pareto frontier")  # fmt: skip
            ax.legend(fontsize=7, loc="lower right")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=9)
        if note:
            fig.text(0.01, -0.03, note, fontsize=6, color="dimgray")
        ax.grid(alpha=0.3)
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.stem + ".tmp.png")
        fig.savefig(tmp, bbox_inches="tight")
        tmp.replace(path)
    finally:
        plt.close(fig)
    return path


# THEANINE's quality metrics (Fig. 9 uses Mauve; Table 7 the other three), summary.json names.
QUALITY = {"mauve": "Mauve", "bleu4": "B-4", "rouge_l": "R-L", "bertscore": "BertScore"}
AXES = {
    "cost": ("cost_per_episode", "API cost per episode (USD)", "fig9"),
    "memory_time": ("memory_s", "memory construction time per episode (s)", "fig10"),
    "retrieval_rg_time": ("retrieval_rg_s", "retrieval + RG time per episode (s)", "fig10"),
}


def run_quality(run_dir: str | Path, metric: str, value: str = "session_mean") -> float | None:
    """Return ``summary.json``'s ``metric`` (x100, as the paper prints it) or None if absent."""
    import json

    summary = json.loads((Path(run_dir) / "summary.json").read_text(encoding="utf-8"))
    entry = summary.get("metrics", {}).get(metric)
    if entry is None:
        return None
    return 100.0 * float(entry.get(value, entry["value"]))


def efficiency_figures(
    runs: Mapping[str, str | Path],
    out_dir: str | Path,
    *,
    reference: str,
    price_model: str | None = None,
    metrics: Mapping[str, str] = QUALITY,
    value: str = "session_mean",
    note: str = "",
) -> dict:
    """Write Fig. 9/10-style PNGs per metric and axis; return costs and Pareto-efficient sets.

    ``runs`` maps a row label (method) to its run folder; ``reference`` is the label whose cost
    is 1 in the cost ratio (THEANINE). Points with an unknown cost or metric are left out and
    listed under ``missing``.
    """
    from recallbench.costs import cost_table

    costs = cost_table(runs, reference, price_model=price_model)
    out: dict = {"costs": costs, "pareto": {}, "figures": [], "missing": []}
    for metric, metric_label in metrics.items():
        quality = {label: run_quality(path, metric, value) for label, path in runs.items()}
        for axis, (key, xlabel, fig) in AXES.items():
            points = {}
            for label in runs:
                x, y = costs[label][key], quality[label]
                if x is None or y is None:
                    out["missing"].append({"row": label, "metric": metric, "axis": axis})
                else:
                    points[label] = (float(x), y)
            if not points:
                continue
            title = f"{metric_label} vs {xlabel} ({'Pareto frontier' if len(points) > 1 else ''})"
            path = Path(out_dir) / f"{fig}_{metric}_vs_{axis}.png"
            out["figures"].append(str(plot_pareto(points, xlabel, metric_label, title, path,
                                                  note=note)))  # fmt: skip
            out["pareto"].setdefault(metric, {})[axis] = pareto_front(points)
    return out


def reproduce_efficiency(
    experiment: str, results_dir: str | Path, out_dir: str | Path, price_model: str | None = None
) -> dict:
    """Table 8 (md/csv/tex) and Fig. 9/10 PNGs per dataset from an experiment's newest runs.

    The experiment's ``table:`` block (``source: costs``) names the rows (memory choices) and
    the reference row; ``price_model`` overrides its ``price_model``. Writes
    ``<out_dir>/<dataset>/fig*.png`` and ``efficiency.json`` (costs, Pareto-efficient sets =
    our Table 7) and ``<results_dir>/tables/theanine_table8.*``.
    """
    import json

    from recallbench.analysis import find_runs, latest_per_job
    from recallbench.costs import build_cost_cells
    from recallbench.reproduce import header_for, load_table_spec
    from recallbench.tables import render

    spec = load_table_spec(experiment)
    if price_model is not None:
        spec["price_model"] = price_model
    runs = list(latest_per_job(find_runs(results_dir, spec["tag"])).values())
    if not runs:
        raise FileNotFoundError(f"no finished runs under {results_dir}/runs/{spec['tag']}")
    cells, used = build_cost_cells(spec, runs)
    header = {**header_for(used or runs), **(spec.get("notes") or {})}
    header["price_model"] = str(spec.get("price_model"))
    tables = render(cells, paper=spec["paper"], table=spec["id"], title=spec["title"],
                    header=header, out_dir=Path(results_dir) / "tables")  # fmt: skip
    report: dict = {"tables": {k: str(v) for k, v in tables.items()}, "datasets": {}}
    for dataset in sorted({r.choice("dataset") for r in runs}):
        rows = {}
        for row in spec["rows"]:
            hits = [r for r in runs if r.choice("memory") == row["memory"]
                    and r.choice("dataset") == dataset]  # fmt: skip
            if hits:
                rows[row["label"]] = hits[-1].path
        if spec["reference_row"] not in rows:
            report["datasets"][dataset] = {"skipped": f"no run for {spec['reference_row']}"}
            continue
        note = f"{dataset}; generator {header.get('generator')}; price model {price_model}"
        found = efficiency_figures(rows, Path(out_dir) / dataset, reference=spec["reference_row"],
                                   price_model=spec.get("price_model"), note=note)  # fmt: skip
        report["datasets"][dataset] = found
    path = Path(out_dir) / "efficiency.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2, default=str, allow_nan=False))
    return report
