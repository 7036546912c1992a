"""THEANINE efficiency: Table 8 (API cost per episode and ratio to THEANINE) and the Fig. 9/10
cost/time vs quality Pareto plots, from run folders (THEANINE sec. 6, Table 7-8, Figs. 9-10).

Per-episode costs and times come from ``recallbench.analysis.costs``; Pareto fronts and plots
from ``recallbench.analysis.pareto``. See ``analysis/costs.py`` for what is counted.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from recallbench.analysis import find_runs, latest_per_job, matches
from recallbench.analysis.costs import cost_table, run_cost
from recallbench.analysis.pareto import pareto_front, plot_pareto
from recallbench.io import write_json
from recallbench.tables import Cell, load_reference, render
from recallbench.tables.engine import header_for, load_table_spec


def build_cost_cells(spec: Mapping[str, Any], runs: Sequence[Any]) -> tuple[list, list]:
    """Table 8 cells from a ``table:`` block with ``source: costs`` (see theanine_table8.yaml).

    Each row's runs (matched like ``reproduce.build_cells``; several datasets pool by episode)
    give ``cost_per_episode`` and ``cost_ratio`` to ``reference_row``; also ``memory_s`` and
    ``retrieval_rg_s`` when the spec lists them. Returns (cells, runs used).
    """
    price_model = spec.get("price_model")
    reference = load_reference(spec["paper"]).get(spec["id"], {}).get("values", {})
    per_row: dict[tuple[str, str], dict[str, float] | None] = {}
    used: dict = {}
    for col in spec["columns"]:
        col_sel = {k: v for k, v in col.items() if k not in ("label", "session")}
        for row in spec["rows"]:
            selector = {**{k: v for k, v in row.items() if k != "label"}, **col_sel}
            matched = [r for r in runs if matches(r, selector)]
            used.update({r.path: r for r in matched})
            per_row[(row["label"], col["label"])] = _pooled(matched, price_model)
    cells = []
    for col in spec["columns"]:
        base = per_row.get((spec["reference_row"], col["label"]))
        for row in spec["rows"]:
            got = per_row[(row["label"], col["label"])]
            for metric, mspec in spec["metrics"].items():
                if got is None:
                    ours = None
                elif metric == "cost_ratio":
                    mine, ref = got.get("cost_per_episode"), (base or {}).get("cost_per_episode")
                    ours = mine / ref if mine is not None and ref else None
                else:
                    ours = got.get(metric)
                paper = reference.get(row["label"], {}).get(col["label"], {}).get(metric)
                n = int(got["n_episodes"]) if got else 0
                cells.append(
                    Cell(
                        row["label"],
                        col["label"],
                        mspec.get("label", metric),
                        ours,
                        paper,
                        n,
                        int(mspec.get("digits", 2)),
                    )
                )
    return cells, list(used.values())


def _pooled(runs: Sequence[Any], price_model: str | None) -> dict[str, float] | None:
    """Episode-weighted per-episode cost and times of several runs (None: no run)."""
    costs = [run_cost(r.path, price_model=price_model) for r in runs]
    n = sum(c.n_episodes for c in costs)
    if not n:
        return None
    key = "cost_priced" if price_model else "cost_recorded"
    values = [getattr(c, key) for c in costs]
    pooled = {
        "n_episodes": float(n),
        "memory_s": sum(c.memory_s * c.n_episodes for c in costs) / n,
        "retrieval_rg_s": sum(c.retrieval_rg_s * c.n_episodes for c in costs) / n,
    }
    if None not in values:
        pooled["cost_per_episode"] = (
            sum(v * c.n_episodes for v, c in zip(values, costs, strict=True)) / n
        )
    return pooled


# THEANINE's quality metrics (Fig. 9 uses Mauve; Table 7 the other three), summary.json names.
QUALITY = {"mauve": "Mauve", "bleu4": "B-4", "rouge_l": "R-L", "bertscore": "BertScore"}
AXES = {
    "cost": ("cost_per_episode", "API cost per episode (USD)", "fig9"),
    "memory_time": ("memory_s", "memory construction time per episode (s)", "fig10"),
    "retrieval_rg_time": ("retrieval_rg_s", "retrieval + RG time per episode (s)", "fig10"),
}


def run_quality(run_dir: str | Path, metric: str, value: str = "session_mean") -> float | None:
    """Return ``summary.json``'s ``metric`` (x100, as the paper prints it) or None if absent."""
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
            out["figures"].append(
                str(plot_pareto(points, xlabel, metric_label, title, path, note=note))
            )
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
    spec = load_table_spec(experiment)
    if price_model is not None:
        spec["price_model"] = price_model
    runs = list(latest_per_job(find_runs(results_dir, spec["tag"])).values())
    if not runs:
        raise FileNotFoundError(f"no finished runs under {results_dir}/runs/{spec['tag']}")
    cells, used = build_cost_cells(spec, runs)
    header = {**header_for(used or runs), **(spec.get("notes") or {})}
    header["price_model"] = str(spec.get("price_model"))
    tables = render(
        cells,
        paper=spec["paper"],
        table=spec["id"],
        title=spec["title"],
        header=header,
        out_dir=Path(results_dir) / "tables",
    )
    report: dict = {"tables": {k: str(v) for k, v in tables.items()}, "datasets": {}}
    for dataset in sorted({r.choice("dataset") for r in runs}):
        rows = {}
        for row in spec["rows"]:
            hits = [
                r
                for r in runs
                if r.choice("memory") == row["memory"] and r.choice("dataset") == dataset
            ]
            if hits:
                rows[row["label"]] = hits[-1].path
        if spec["reference_row"] not in rows:
            report["datasets"][dataset] = {"skipped": f"no run for {spec['reference_row']}"}
            continue
        note = f"{dataset}; generator {header.get('generator')}; price model {price_model}"
        found = efficiency_figures(
            rows,
            Path(out_dir) / dataset,
            reference=spec["reference_row"],
            price_model=spec.get("price_model"),
            note=note,
        )
        report["datasets"][dataset] = found
    write_json(Path(out_dir) / "efficiency.json", report, default=str, sort_keys=False)
    return report
