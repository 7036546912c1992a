"""CAIM Table 2: inter-rater agreement of CAIM judges over the answers of finished runs.

``conf/experiment/caim_table2.yaml`` holds a ``table:`` block with ``source_tag`` (the runs whose
answers are rescored, e.g. ``caim_table3``), ``raters`` (CAIM judge mappings with a ``label``,
``recallbench.judges.caim.build_caim_judge``), ``rows`` (``{label, metric}``) and ``columns``
(run selectors, as in ``recallbench.tables.engine``). Every cell aligns the raters' scores on the
questions all of them scored (``recallbench.metrics.agreement.align_ratings``) and reports Percent
Agreement (all raters identical) and ICC(A,1): McGraw & Wong's absolute agreement, single rater
(the Shrout & Fleiss ICC(2,1) formula), which is what CAIM sec. 4.1.4 describes ("two-way fixed
effect model", "measures absolute agreement between raters"). The csv also carries the
consistency ICC(C,1) (= ICC(3,1), what this table showed before), ICC(A,k) and Fleiss' kappa.
An undefined statistic (no variance) is "n/a".

    python -m recallbench.papers.caim.agreement caim_table2 [--results results]
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from recallbench.analysis import RunInfo, find_runs, latest_per_job, matches
from recallbench.metrics.agreement import agreement_report, align_ratings
from recallbench.protocols.gvd_scores import rescore_run
from recallbench.tables.engine import header_for, load_table_spec
from recallbench.tables.render import Cell, load_reference, render

EXTRA = {"icc_c1": "ICC(C,1)", "icc_ak": "ICC(A,k)", "fleiss_kappa": "Fleiss kappa"}


def rater_scores(run: RunInfo, raters: list[dict[str, Any]]) -> dict[str, dict[str, dict]]:
    """Return ``{metric: {rater label: {pred_id: score or None}}}`` for one run."""
    out: dict[str, dict[str, dict]] = {}
    for rater in raters:
        cfg = {k: v for k, v in rater.items() if k != "label"}
        answers, verdicts = rescore_run(run.path, cfg)
        for p in answers:
            for metric, value in verdicts[p.pred_id].scores.items():
                out.setdefault(metric, {}).setdefault(rater["label"], {})[p.pred_id] = value
    return out


def agreement_cells(spec: dict, runs: list[RunInfo]) -> tuple[list[Cell], list[RunInfo]]:
    """Return the table's cells (ours beside the paper's) and the runs they came from."""
    reference = load_reference(spec["paper"]).get(spec["id"], {}).get("values", {})
    labels = [r["label"] for r in spec["raters"]]
    if len(set(labels)) != len(labels) or len(labels) < 2:
        raise ValueError(f"caim table2: need >= 2 raters with distinct labels, got {labels}")
    cells, used = [], []
    for col in spec["columns"]:
        selector = {k: v for k, v in col.items() if k != "label"}
        matched = sorted((r for r in runs if matches(r, selector)), key=lambda r: r.stamp)
        scores = rater_scores(matched[-1], spec["raters"]) if matched else {}
        used += matched[-1:]
        for row in spec["rows"]:
            report = None
            by_rater = scores.get(row["metric"])
            if by_rater:
                _, items, matrix = align_ratings(by_rater)
                report = agreement_report(matrix) if len(items) else None
            paper = reference.get(row["label"], {}).get(col["label"], {})
            values = {
                "percent_agreement": report and report["percent_agreement"],
                "icc": report and report["icc_a1"],
            }
            n = report["n_items"] if report else 0
            for metric, mspec in spec["metrics"].items():
                v = values[metric]
                ours = None if v is None else v * mspec.get("scale", 1)
                cells.append(
                    Cell(
                        row["label"],
                        col["label"],
                        mspec.get("label", metric),
                        ours,
                        paper.get(metric),
                        n,
                        mspec.get("digits", 2),
                    )
                )
            if report:
                for key, label in EXTRA.items():
                    v = report[key]
                    cells.append(
                        Cell(
                            row["label"],
                            col["label"],
                            label,
                            None if v is None else v * 100,
                            None,
                            n,
                            1,
                        )
                    )
    return cells, used


def agreement_table(experiment: str = "caim_table2", results_dir: str | Path = "results"):
    """Render the agreement table of ``experiment`` from the newest runs of its source tag."""
    spec = load_table_spec(experiment)
    tag = spec.get("source_tag", spec["tag"])
    runs = list(latest_per_job(find_runs(results_dir, tag)).values())
    if not runs:
        raise FileNotFoundError(f"no finished runs under {results_dir}/runs/{tag}: run it first")
    cells, used = agreement_cells(spec, runs)
    header = header_for(used or runs)
    header["raters"] = "; ".join(
        f"{r['label']} = {', '.join(f'{k}={v}' for k, v in r.items() if k != 'label')}"
        for r in spec["raters"]
    )
    header["paper raters"] = "3 human annotators (sec. 4.1.4)"
    header["statistics"] = (
        "Percent Agr. = share of questions all raters scored identically; "
        "ICC = ICC(A,1), McGraw & Wong absolute agreement, single rater (Shrout & Fleiss "
        "ICC(2,1) formula), as CAIM sec. 4.1.4 describes; ICC(C,1) = consistency; "
        "n/a = undefined (no variance) or not scored (coherence offline)"
    )
    return render(
        cells,
        paper=spec["paper"],
        table=spec["id"],
        title=spec.get("title", ""),
        header=header,
        out_dir=Path(results_dir) / "tables",
    )


def main(argv: list[str] | None = None) -> None:
    """CLI: ``python -m recallbench.papers.caim.agreement <experiment> [--results DIR]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiment", nargs="?", default="caim_table2")
    parser.add_argument("--results", default="results")
    args = parser.parse_args(argv)
    for path in agreement_table(args.experiment, args.results).values():
        print(path)


if __name__ == "__main__":
    main()
