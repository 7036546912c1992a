"""LUFY tables from run folders and conversation logs (Sumida et al., arXiv 2409.12524).

Each LUFY experiment (``conf/experiment/lufy_*.yaml``) has a ``table:`` block with a ``kind``:

- ``summary`` (Tables 3, 11, 13, 16-18, App. D): values from the runs' ``summary.json``. Rows
  select runs by ``memory`` (config choice), ``logs`` (the LUFY system whose conversation logs
  were replayed, ``dataset.options.system``) or any dotted config path (``memory.threshold``);
  columns pick ``session: <s>`` (``per_session``), ``qsession: "<s>/<q>"``
  (``per_question_session``) or ``value: session_mean|value``; metrics give label/scale/digits.
- ``agreement`` (Tables 12, 14): system-human agreement from the runs' memory snapshots and the
  annotators' labels (``recallbench.papers.lufy.memories``).
- ``topk`` (Table 15): rank of the answering memory among the store (``lufy_memories``).
- ``sentiment`` (Table 10) and ``rating`` (Table 8): user experience from the logs alone
  (``recallbench.papers.lufy.ux``).

With several metrics the column label is ``"<metric> <column>"`` (tables.render keys cells by
row and column). A cell without a matching run is ``n/a``, never invented. The paper's numbers
come from ``references/lufy.yaml``.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from recallbench.analysis import RunInfo
from recallbench.io import atomic_path
from recallbench.papers.lufy.runs import (
    PAPER,
    lufy_reference,
    paper_value,
    run_value,
    select,
    summary,
    table_runs,
)
from recallbench.tables.render import Cell

# -- summary tables (3, 11, 13, 16-18, D) --------------------------------------------------


def _summary_value(entry: dict, column: dict) -> tuple[float, int] | None:
    if "session" in column:
        sub = (entry.get("per_session") or {}).get(str(column["session"]))
        return None if sub is None else (sub["value"], sub["n"])
    if "qsession" in column:
        sub = (entry.get("per_question_session") or {}).get(str(column["qsession"]))
        return None if sub is None else (sub["value"], sub["n"])
    how = column.get("value", "value")
    return (entry[how], entry.get("n", 0)) if how in entry else None


def column_label(spec: dict, metric: str, column: dict) -> str:
    """Return the rendered column label: ``"<metric label> <column>"`` when several metrics."""
    if len(spec["metrics"]) == 1:
        return str(column["label"])
    return f"{spec['metrics'][metric].get('label', metric)} {column['label']}"


def rows_by(runs: Sequence[RunInfo], key: str) -> list[dict[str, Any]]:
    """Return one row per distinct value of ``key`` among the runs (a sweep), sorted."""
    values = sorted({v for r in runs if (v := run_value(r, key)) is not None})
    return [{"label": f"{v:.2f}" if isinstance(v, float) else str(v), key: v} for v in values]


def summary_cells(spec: dict, runs: Sequence[RunInfo]) -> tuple[list[Cell], list[RunInfo]]:
    """Return the cells of a ``summary`` table and the runs used.

    ``rows_by: <key>`` instead of ``rows`` makes one row per swept value of ``key``.
    """
    reference = lufy_reference(str(spec["id"]))
    rows = rows_by(runs, spec["rows_by"]) if "rows_by" in spec else spec["rows"]
    cells, used = [], {}
    for metric, mspec in spec["metrics"].items():
        for row in rows:
            matched = select(runs, row)
            used.update({r.path: r for r in matched})
            for column in spec["columns"]:
                found = []
                for run in select(matched, column):
                    entry = summary(run).get("metrics", {}).get(metric)
                    if entry is not None and (v := _summary_value(entry, column)) is not None:
                        found.append(v)
                n = sum(v[1] for v in found)
                ours = None
                if found:
                    weights = [v[1] or 1 for v in found]
                    ours = sum(v[0] * w for v, w in zip(found, weights, strict=True)) / sum(weights)
                    ours *= mspec.get("scale", 1)
                paper = paper_value(reference, row["label"], column["label"], metric)
                label = column_label(spec, metric, column)
                cells.append(
                    Cell(
                        row["label"],
                        label,
                        mspec.get("label", metric),
                        ours,
                        paper,
                        n or None,
                        mspec.get("digits", 1),
                    )
                )
    return cells, list(used.values())


# -- App. D / Figure 11: threshold sweep ----------------------------------------------------


def plot_threshold(cells: Sequence[Cell], path: Path, title: str) -> Path:
    """Plot precision / recall / F1 (the ``Avg.`` column) against the threshold rows as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series: dict[str, list[tuple[float, float]]] = {}
    for cell in cells:
        if cell.ours is not None and cell.column.endswith("Avg."):
            series.setdefault(cell.metric, []).append((float(cell.row), float(cell.ours)))
    fig, ax = plt.subplots(figsize=(5, 3.2), dpi=120)
    for metric, points in series.items():
        xs, ys = zip(*sorted(points), strict=True)
        ax.plot(xs, ys, marker="o", label=metric)
    ax.set_xlabel("cosine similarity threshold")
    ax.set_ylabel("%")
    ax.set_title(textwrap.fill(title, 60), fontsize=8)
    if series:
        ax.legend()
    else:
        ax.text(0.5, 0.5, "n/a: no finished runs", ha="center", transform=ax.transAxes)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp)
    plt.close(fig)
    return path


# -- Table 2: fitted weights ----------------------------------------------------------------

WEIGHT_ROWS = {
    "A": "Arousal",
    "P": "Perplexity",
    "L": "LLM Estimated Importance",
    "R1": "Most Relevant Memory Count",
    "R2": "2nd Most Relevant Memory Count",
}


def weight_cells(spec: dict, fit: dict) -> list[Cell]:
    """Return Table 2 cells from a ``scripts/fit_lufy_weights.py --out`` result."""
    reference = lufy_reference(str(spec["id"]))
    n = {"A": "n_stage1", "P": "n_stage1", "L": "n_stage1", "R1": "n_stage2", "R2": "n_stage2"}
    return [
        Cell(
            row,
            "Weight",
            "weight",
            fit["weights"].get(metric),
            paper_value(reference, row, "Weight", "weight"),
            fit.get(n[metric]),
            3,
        )
        for metric, row in WEIGHT_ROWS.items()
    ]


def reproduce_weights(spec: dict, results_dir: str | Path) -> dict[str, Path]:
    """Render Table 2 from the weight fit written to ``results_dir/<spec.fit>``."""
    from recallbench.tables.render import render

    path = Path(results_dir) / spec["fit"]
    if not path.exists():
        raise FileNotFoundError(
            f"{path} not found: run scripts/fit_lufy_weights.py --data-dir DIR --out {path}"
        )
    fit = json.loads(path.read_text(encoding="utf-8"))
    setup = fit.get("setup") or {}
    header = {"fit": str(path), **{k: str(v) for k, v in setup.items()}}
    header["normalization bounds"] = str(fit.get("bounds"))
    header.update(spec.get("notes") or {})
    return render(
        weight_cells(spec, fit),
        paper=PAPER,
        table=spec["id"],
        title=spec["title"],
        header=header,
        out_dir=Path(results_dir) / "tables",
        notes=reference_notes(str(spec["id"])),
    )


# -- reproduce -------------------------------------------------------------------------------


def reference_notes(table_id: str) -> list[str]:
    """Notes from the reference: the paper's significance marks and its own inconsistencies."""
    reference = lufy_reference(table_id)
    notes = []
    marks = reference.get("significant") or []
    if marks:
        cells = ", ".join(f"{r} {c}" for r, c in marks)
        notes.append(f"paper marks p < 0.05 (paired t-test, better than both others) at: {cells}")
    notes += [f"paper quirk: {q}" for q in reference.get("quirks") or []]
    return notes


def reproduce_from_runs(spec: dict, results_dir: str | Path, embedder=None) -> dict[str, Path]:
    """Render a ``summary``, ``agreement`` or ``topk`` LUFY table from its runs."""
    from recallbench.tables.engine import header_for
    from recallbench.tables.render import render

    runs = table_runs(results_dir, spec["tag"])
    if not runs:
        raise FileNotFoundError(
            f"no finished runs under {results_dir}/runs/{spec['tag']}: run the sweep first"
        )
    notes: list[str] = []
    if spec["kind"] == "summary":
        cells, used = summary_cells(spec, runs)
    elif spec["kind"] == "agreement":
        from recallbench.papers.lufy.memories import agreement_cells

        cells, used = agreement_cells(spec, runs)
    elif spec["kind"] == "topk":
        from recallbench.papers.lufy.memories import topk_cells, topk_ranks

        used = select(runs, spec.get("runs") or {})
        if embedder is None:
            from recallbench.embed import build_embedder

            embedder = build_embedder(used[0].config["embedder"]) if used else None
        ranks = [r for run in used for r in topk_ranks(run, embedder)]
        cells, notes = topk_cells(spec, ranks)
    else:
        raise ValueError(f"table kind {spec['kind']!r} does not read runs")
    header = header_for(used or runs)
    header.update(spec.get("notes") or {})
    paths = render(
        cells,
        paper=PAPER,
        table=spec["id"],
        title=spec.get("title", spec["id"]),
        header=header,
        out_dir=Path(results_dir) / "tables",
        notes=notes + reference_notes(str(spec["id"])),
    )
    if spec.get("figure"):
        figure = Path(results_dir) / "figures" / f"{spec['figure']}.png"
        paths["png"] = plot_threshold(cells, figure, spec.get("title", spec["id"]))
    return paths
