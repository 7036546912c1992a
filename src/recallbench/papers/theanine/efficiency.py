"""THEANINE efficiency: Table 8 (API cost per episode and ratio to THEANINE) and the Fig. 9/10
cost/time vs quality Pareto plots, from run folders (THEANINE sec. 6, Table 7-8, Figs. 9-10).

Per-episode costs and times come from ``recallbench.analysis.costs``; Pareto fronts and plots
from ``recallbench.analysis.pareto``. See ``analysis/costs.py`` for what is counted.

Builder ``cost_table`` of ``conf/experiment/theanine_table8.yaml``. Options: ``reference_row``
(the row whose cost is 1 in the ratio), ``price_model`` (reprice every run's tokens at this
model; ``table.price_model=...`` on the command line), ``figures`` (folder under the results
folder for the PNGs and ``efficiency.json``, default ``figures/theanine``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from recallbench.analysis import select
from recallbench.analysis.costs import cost_table as cost_rows
from recallbench.analysis.costs import run_cost
from recallbench.analysis.pareto import pareto_front, plot_pareto
from recallbench.io import write_json
from recallbench.metrics.summary import metric_entry
from recallbench.records import JSON
from recallbench.run.read import RunRecord, read_summary
from recallbench.tables import BuiltTable, Cell, TableContext, TableSpec, header_for
from recallbench.tables.engine import reference_values
from recallbench.tables.render import reference_value


def build_cost_cells(
    spec: TableSpec, runs: Sequence[RunRecord]
) -> tuple[list[Cell], list[RunRecord]]:
    """Table 8 cells: per row and column, the matching runs' cost per episode and its ratio.

    Several runs of a cell (datasets) pool by episode; the ratio is to ``reference_row`` of the
    same column; ``memory_s`` and ``retrieval_rg_s`` when the spec lists them.
    """
    price_model = spec.option("price_model", None)
    reference = reference_values(spec)
    per_row: dict[tuple[str, str], dict[str, float] | None] = {}
    used: dict[Path, RunRecord] = {}
    for col in spec.need("columns"):
        for row in spec.need("rows"):
            matched = select(select(runs, row.select), col.select)
            used.update({r.path: r for r in matched})
            per_row[(row.label, col.label)] = _pooled(matched, price_model)
    cells = []
    for col in spec.need("columns"):
        base = per_row.get((spec.option("reference_row"), col.label))
        for row in spec.need("rows"):
            got = per_row[(row.label, col.label)]
            for metric, mspec in spec.need("metrics").items():
                ours = _cost_value(metric, got, base)
                paper = reference_value(reference, row.label, col.label, metric)
                n = int(got["n_episodes"]) if got else 0
                cells.append(
                    Cell(
                        row.label,
                        col.label,
                        mspec.label_or(metric),
                        ours,
                        paper,
                        n,
                        mspec.digits_or(2),
                    )
                )
    return cells, list(used.values())


def _cost_value(
    metric: str, got: dict[str, float] | None, base: dict[str, float] | None
) -> float | None:
    """Our value of ``metric`` for a row (``cost_ratio``: its cost over the reference row's)."""
    if got is None:
        return None
    if metric == "cost_ratio":
        mine, ref = got.get("cost_per_episode"), (base or {}).get("cost_per_episode")
        return mine / ref if mine is not None and ref else None
    return got.get(metric)


def _pooled(runs: Sequence[RunRecord], price_model: str | None) -> dict[str, float] | None:
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
    entry = metric_entry(read_summary(Path(run_dir)), metric)
    if entry is None:
        return None
    return 100.0 * float(entry[value] if value in entry else entry["value"])


def efficiency_figures(
    runs: Mapping[str, str | Path],
    out_dir: str | Path,
    *,
    reference: str,
    price_model: str | None = None,
    metrics: Mapping[str, str] = QUALITY,
    value: str = "session_mean",
    note: str = "",
) -> dict[str, JSON]:
    """Write Fig. 9/10-style PNGs per metric and axis; return costs and Pareto-efficient sets.

    ``runs`` maps a row label (method) to its run folder; ``reference`` is the label whose cost
    is 1 in the cost ratio (THEANINE). Points with an unknown cost or metric are left out and
    listed under ``missing``.
    """
    costs = cost_rows(runs, reference, price_model=price_model)
    out: dict[str, JSON] = {"costs": costs, "pareto": {}, "figures": [], "missing": []}
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


def _dataset_figures(
    spec: TableSpec, runs: Sequence[RunRecord], out_dir: Path, note: str
) -> dict[str, dict[str, JSON]]:
    """Fig. 9/10 PNGs per dataset (a row's newest run of that dataset); a report per dataset."""
    reference_row = spec.option("reference_row")
    report: dict[str, dict[str, JSON]] = {}
    named = {r.choice("dataset") for r in runs}  # every run folder records its dataset
    for dataset in sorted(d for d in named if d is not None):
        rows = {}
        for row in spec.rows:
            hits = select(runs, {**row.select, "dataset": dataset})
            if hits:
                rows[row.label] = hits[-1].path
        if reference_row not in rows:
            report[dataset] = {"skipped": f"no run for {reference_row}"}
            continue
        report[dataset] = efficiency_figures(
            rows,
            out_dir / dataset,
            reference=reference_row,
            price_model=spec.option("price_model", None),
            note=f"{dataset}; {note}",
        )
    return report


def cost_table(spec: TableSpec, ctx: TableContext) -> BuiltTable:
    """Builder of Table 8 (+ Figs. 9/10 per dataset and ``efficiency.json``: our Table 7)."""
    cells, used = build_cost_cells(spec, ctx.runs)
    price_model = spec.option("price_model", None)
    generator = header_for(used or ctx.runs)["generator"]
    out_dir = Path(ctx.results_dir) / str(spec.option("figures", "figures/theanine"))
    note = f"generator {generator}; price model {price_model}"
    report = {"datasets": _dataset_figures(spec, ctx.runs, out_dir, note)}
    files = {"json": out_dir / "efficiency.json"}
    write_json(files["json"], report, default=str, sort_keys=False)
    for found in report["datasets"].values():
        files.update({Path(f).stem: Path(f) for f in found.get("figures", [])})
    return BuiltTable(cells, runs=used, header={"price_model": str(price_model)}, files=files)
