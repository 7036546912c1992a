"""LUFY tables from run folders and conversation logs (Sumida et al., arXiv 2409.12524).

Each LUFY experiment (``conf/experiment/lufy_*.yaml``) has a ``table:`` block with a ``kind``:

- ``summary`` (Tables 3, 11, 13, 16-18, App. D): values from the runs' ``summary.json``. Rows
  select runs by ``memory`` (config choice), ``logs`` (the LUFY system whose conversation logs
  were replayed, ``dataset.options.system``) or any dotted config path (``memory.threshold``);
  columns pick ``session: <s>`` (``per_session``), ``qsession: "<s>/<q>"``
  (``per_question_session``) or ``value: session_mean|value``; metrics give label/scale/digits.
- ``agreement`` (Tables 12, 14): system-human agreement from the runs' memory snapshots and the
  annotators' labels (``recallbench.lufy_memories``).
- ``topk`` (Table 15): rank of the answering memory among the store (``lufy_memories``).
- ``sentiment`` (Table 10) and ``rating`` (Table 8): user experience from the logs alone
  (``recallbench.lufy_ux``).

With several metrics the column label is ``"<metric> <column>"`` (tables.render keys cells by
row and column). A cell without a matching run is ``n/a``, never invented. The paper's numbers
come from ``references/lufy.yaml``.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from recallbench.analysis import RunInfo, find_runs, latest_per_job
from recallbench.records import Episode, MemoryItem
from recallbench.reproduce import load_table_spec
from recallbench.tables import Cell, load_reference

PAPER = "lufy"
ALIASES = {"logs": "dataset.options.system"}
# Keys of rows and columns that place a cell rather than select runs.
CONTROL = frozenset({"label", "session", "qsession", "value", "random", "annotators"})


# -- references and specs -----------------------------------------------------------------


@lru_cache(maxsize=1)
def _reference() -> dict[str, Any]:
    return load_reference("lufy")


def lufy_reference(table_id: str) -> dict[str, Any]:
    """Return the paper's ``table<id>`` entry of ``references/lufy.yaml`` ({} when absent)."""
    return _reference().get(f"table{table_id}", {})


def paper_value(reference: dict, row: str, column: str, metric: str) -> Any:
    """Return the paper's value of (row, column, metric), or None when it reports none."""
    return reference.get("values", {}).get(row, {}).get(column, {}).get(metric)


def load_spec(experiment: str) -> dict[str, Any]:
    """Read the experiment's ``table:`` block (``reproduce.load_table_spec``) with LUFY defaults."""
    spec = load_table_spec(experiment)
    spec.setdefault("kind", "summary")
    return spec


# -- runs ---------------------------------------------------------------------------------


def table_runs(results_dir: str | Path, tag: str) -> list[RunInfo]:
    """Return the newest finished run of every job under ``results_dir/runs/<tag>``."""
    return list(latest_per_job(find_runs(results_dir, tag)).values())


def run_value(run: RunInfo, key: str) -> Any:
    """Return a run's config-group choice (``memory``) or dotted config value (``logs``)."""
    key = ALIASES.get(key, key)
    if "." not in key:
        return run.choice(key)
    node: Any = run.config
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _as_list(value: Any) -> list:
    return list(value) if isinstance(value, list | tuple) else [value]


def select(runs: Iterable[RunInfo], selector: dict[str, Any]) -> list[RunInfo]:
    """Return the runs matching every selecting key of ``selector`` (a value or a list)."""
    keys = [k for k in selector if k not in CONTROL]
    return [r for r in runs if all(run_value(r, k) in _as_list(selector[k]) for k in keys)]


def summary(run: RunInfo) -> dict[str, Any]:
    """Return the run's ``summary.json``."""
    return json.loads((run.path / "summary.json").read_text(encoding="utf-8"))


def safe_name(episode_id: str) -> str:
    """Return the file stem the runner gives an episode (``runner._safe``)."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in episode_id)


def snapshots(run: RunInfo, episode_ids: Iterable[str]) -> dict[str, dict[int, list[MemoryItem]]]:
    """Return {episode_id: {after_session: items}} from the run's ``memory/<episode>.jsonl``."""
    out: dict[str, dict[int, list[MemoryItem]]] = {}
    for episode_id in episode_ids:
        path = run.path / "memory" / f"{safe_name(episode_id)}.jsonl"
        if not path.exists():
            continue
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
        out[episode_id] = {
            int(r["after_session"]): [MemoryItem.from_dict(i) for i in r["items"]] for r in rows
        }
    return out


@lru_cache(maxsize=16)
def _load_cached(name: str, data_dir: str, options: str) -> tuple[Episode, ...]:
    from recallbench.datasets import load

    return tuple(load(name, data_dir, **json.loads(options)))


def run_episodes(run: RunInfo) -> dict[str, Episode]:
    """Load the episodes a run replayed (its dataset config), keyed by episode id."""
    ds = run.config.get("dataset") or {}
    options = json.dumps(ds.get("options") or {}, sort_keys=True)
    return {e.episode_id: e for e in _load_cached(ds["name"], str(ds["data_dir"]), options)}


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
                cells.append(Cell(row["label"], label, mspec.get("label", metric), ours, paper,
                                  n or None, mspec.get("digits", 1)))  # fmt: skip
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
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.stem + ".tmp.png")
    fig.savefig(tmp)
    plt.close(fig)
    tmp.replace(path)
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
        Cell(row, "Weight", "weight", fit["weights"].get(metric),
             paper_value(reference, row, "Weight", "weight"), fit.get(n[metric]), 3)
        for metric, row in WEIGHT_ROWS.items()
    ]  # fmt: skip


def reproduce_weights(spec: dict, results_dir: str | Path) -> dict[str, Path]:
    """Render Table 2 from the weight fit written to ``results_dir/<spec.fit>``."""
    from recallbench.tables import render

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
    return render(weight_cells(spec, fit), paper=PAPER, table=spec["id"], title=spec["title"],
                  header=header, out_dir=Path(results_dir) / "tables",
                  notes=reference_notes(str(spec["id"])))  # fmt: skip


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
    from recallbench.reproduce import header_for
    from recallbench.tables import render

    runs = table_runs(results_dir, spec["tag"])
    if not runs:
        raise FileNotFoundError(
            f"no finished runs under {results_dir}/runs/{spec['tag']}: run the sweep first"
        )
    notes: list[str] = []
    if spec["kind"] == "summary":
        cells, used = summary_cells(spec, runs)
    elif spec["kind"] == "agreement":
        from recallbench.lufy_memories import agreement_cells

        cells, used = agreement_cells(spec, runs)
    elif spec["kind"] == "topk":
        from recallbench.lufy_memories import topk_cells, topk_ranks

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
    paths = render(cells, paper=PAPER, table=spec["id"], title=spec.get("title", spec["id"]),
                   header=header, out_dir=Path(results_dir) / "tables",
                   notes=notes + reference_notes(str(spec["id"])))  # fmt: skip
    if spec.get("figure"):
        figure = Path(results_dir) / "figures" / f"{spec['figure']}.png"
        paths["png"] = plot_threshold(cells, figure, spec.get("title", spec["id"]))
    return paths
