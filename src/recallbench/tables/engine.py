"""Turn an experiment's run folders into its paper table (``conf/experiment/<paper>_table<n>.yaml``).

The experiment file holds the Hydra sweep and a ``table:`` block::

    table:
      paper: theanine            # references/<paper>.yaml
      id: table1                 # key in that file; output results/tables/<paper>_<id>.*
      title: ...
      value: session_mean        # summary field per cell: value | session_mean | per_session
      rows:    [{label: All Dialogue History, memory: full_history}, ...]
      columns: [{label: MSC, dataset: msc}, ...]   # or {label: Session 3, session: 3, dataset: [msc, cc]}
      metrics: {bleu4: {label: Bleu-4, scale: 100}, ...}   # ours * scale = the paper's unit

A cell takes the newest finished run whose choices match the row and the column; several datasets
in one column are averaged (weighted by n). Missing runs give "n/a" cells, never invented values.

    python -m recallbench.tables.engine theanine_table1 [--results results]
"""

from __future__ import annotations

import argparse
import importlib
import json
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from recallbench import CONF_DIR
from recallbench.analysis import RunInfo, find_runs, latest_per_job, matches
from recallbench.tables.render import Cell, load_reference, render


def load_table_spec(experiment: str) -> dict[str, Any]:
    """Read the ``table:`` block and ``tag`` of ``conf/experiment/<experiment>.yaml``."""
    path = CONF_DIR / "experiment" / f"{experiment}.yaml"
    if not path.exists():
        options = sorted(p.stem for p in path.parent.glob("*.yaml"))
        raise FileNotFoundError(f"{path} not found; experiments: {', '.join(options)}")
    cfg = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
    if "table" not in cfg:
        raise KeyError(f"{path}: no 'table:' block")
    spec = dict(cfg["table"])
    spec["tag"] = cfg.get("tag", experiment)
    return spec


def _metric_value(
    run: RunInfo, metric: str, how: str, session: int | None
) -> tuple[float, int] | None:
    summary = json.loads((run.path / "summary.json").read_text())
    entry = summary.get("metrics", {}).get(metric)
    if entry is None:
        return None
    if session is not None:
        sub = (entry.get("per_session") or {}).get(str(session))
        return None if sub is None else (sub["value"], sub["n"])
    return entry.get(how, entry.get("value")), entry.get("n", 0)


def build_cells(spec: dict, runs: list[RunInfo]) -> tuple[list[Cell], list[RunInfo]]:
    """Return the table's cells and the runs used for them."""
    reference = load_reference(spec["paper"]).get(spec["id"], {}).get("values", {})
    cells, used = [], {}
    for row in spec["rows"]:
        for col in spec["columns"]:
            selector = {
                **{k: v for k, v in row.items() if k != "label"},
                **{k: v for k, v in col.items() if k not in ("label", "session")},
            }
            matched = [r for r in runs if matches(r, selector)]
            for metric, mspec in spec["metrics"].items():
                found = [
                    v
                    for r in matched
                    if (
                        v := _metric_value(
                            r, metric, spec.get("value", "value"), col.get("session")
                        )
                    )
                ]
                used.update({r.path: r for r in matched})
                n = sum(v[1] for v in found)
                ours = (sum(v[0] * v[1] for v in found) / n * mspec.get("scale", 1)) if n else None
                paper = reference.get(row["label"], {}).get(col["label"], {}).get(metric)
                cells.append(
                    Cell(row["label"], col["label"], mspec.get("label", metric), ours, paper, n)
                )
    return cells, list(used.values())


def header_for(runs: list[RunInfo]) -> dict[str, str]:
    """Name the generator, embedder, judge and data every cell came from."""

    def collect(fn) -> str:
        return ", ".join(sorted({str(fn(r)) for r in runs})) or "n/a"

    def data(r: RunInfo) -> str:
        ds = r.config.get("dataset", {})
        return f"{ds.get('name')} @ {ds.get('data_dir')} {ds.get('options') or ''}".strip()

    return {
        "generator": collect(
            lambda r: (
                f"{r.config.get('generator', {}).get('backend')}:"
                f"{r.config.get('generator', {}).get('model')}"
            )
        ),
        "embedder": collect(lambda r: r.config.get("embedder", {}).get("kind")),
        "judge": collect(lambda r: r.choice("judge") or "none"),
        "data": collect(data),
        "episodes": collect(lambda r: json.loads((r.path / "run.json").read_text())["n_episodes"]),
        "runs": collect(lambda r: f"{r.tag}/{r.stamp}"),
    }


def reproduce(experiment: str, results_dir: str | Path = "results") -> list[Path]:
    """Render the experiment's table from the newest finished runs of its tag."""
    spec = load_table_spec(experiment)
    runs = list(latest_per_job(find_runs(results_dir, spec["tag"])).values())
    if not runs:
        raise FileNotFoundError(
            f"no finished runs under {results_dir}/runs/{spec['tag']}: run the sweep first"
        )
    builder = build_cells
    if spec.get("builder"):  # a dotted path: a paper's own cell builder (spec, runs) -> cells, used
        module, _, name = str(spec["builder"]).rpartition(".")
        builder = getattr(importlib.import_module(module), name)
    cells, used = builder(spec, runs)
    header = header_for(used or runs)
    header.update(spec.get("notes") or {})
    return render(
        cells,
        paper=spec["paper"],
        table=spec["id"],
        title=spec.get("title", experiment),
        header=header,
        out_dir=Path(results_dir) / "tables",
    )


def main(argv: list[str] | None = None) -> None:
    """CLI: ``python -m recallbench.tables.engine <experiment> [--results DIR]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiment")
    parser.add_argument("--results", default="results")
    args = parser.parse_args(argv)
    for path in reproduce(args.experiment, args.results):
        print(path)


if __name__ == "__main__":
    main()
