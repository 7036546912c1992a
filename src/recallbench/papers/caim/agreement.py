"""CAIM Table 2: inter-rater agreement of CAIM judges over the answers of finished runs.

Builder ``agreement_table`` of ``conf/experiment/caim_table2.yaml`` (``runs: caim_table3``: the
runs whose answers are rescored). Options: ``raters`` (CAIM judge mappings with a ``label``,
each built by the table command: ``make_caim_judge``); rows are ``{label, metric}``, columns
select runs. Every cell aligns the raters' scores on the questions all of them scored
(``recallbench.metrics.agreement.align_ratings``) and reports Percent Agreement (all raters
identical) and ICC(A,1): McGraw & Wong's absolute agreement, single rater (the Shrout & Fleiss
ICC(2,1) formula), which is what CAIM sec. 4.1.4 describes ("two-way fixed effect model",
"measures absolute agreement between raters"). The csv also carries the consistency ICC(C,1)
(= ICC(3,1)), ICC(A,k) and Fleiss' kappa. An undefined statistic (no variance) is "n/a".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from recallbench.analysis import select
from recallbench.judges.caim import CaimJudge
from recallbench.metrics.agreement import agreement_report, align_ratings
from recallbench.protocols.qa_gvd.scores import rescore_answers
from recallbench.records import JSON
from recallbench.run.read import RunRecord
from recallbench.tables import BuiltTable, Cell, TableContext, TableSpec
from recallbench.tables.engine import reference_values
from recallbench.tables.entry import Entry
from recallbench.tables.render import reference_value

EXTRA = {"icc_c1": "ICC(C,1)", "icc_ak": "ICC(A,k)", "fleiss_kappa": "Fleiss kappa"}
STATISTICS = (
    "Percent Agr. = share of questions all raters scored identically; "
    "ICC = ICC(A,1), McGraw & Wong absolute agreement, single rater (Shrout & Fleiss "
    "ICC(2,1) formula), as CAIM sec. 4.1.4 describes; ICC(C,1) = consistency; "
    "n/a = undefined (no variance) or not scored (coherence offline)"
)


def rater_scores(
    run: RunRecord, judges: Mapping[str, CaimJudge]
) -> dict[str, dict[str, dict[str, float | None]]]:
    """Return ``{metric: {rater label: {pred_id: score or None}}}`` for one run."""
    out: dict[str, dict[str, dict[str, float | None]]] = {}
    for label, judge in judges.items():
        episodes = run.dataset_episodes()
        answers, verdicts = rescore_answers(
            run.predictions, episodes, run.stores, judge, str(run.path)
        )
        for p in answers:
            for metric, value in verdicts[p.pred_id].scores.items():
                out.setdefault(metric, {}).setdefault(label, {})[p.pred_id] = value
    return out


def _raters(spec: TableSpec) -> list[dict[str, JSON]]:
    raters = spec.option("raters")
    labels = [r.get("label") for r in raters] if isinstance(raters, list) else []
    if len(labels) < 2 or None in labels or len(set(labels)) != len(labels):
        raise spec.error("raters", f"need >= 2 rater mappings with distinct labels, got {raters!r}")
    mappings: list[dict[str, JSON]] = raters  # spec options are JSON: a list of mappings here
    return mappings


def _cells(
    spec: TableSpec, row: Entry, column: Entry, report: dict[str, JSON] | None
) -> list[Cell]:
    paper = reference_values(spec)
    values = {
        "percent_agreement": report["percent_agreement"] if report else None,
        "icc": report["icc_a1"] if report else None,
    }
    n = report["n_items"] if report else 0
    cells = []
    for metric, mspec in spec.need("metrics").items():
        v = values[metric]
        ours = None if v is None else v * mspec.scale_or(1)
        label = mspec.label_or(metric)
        cells.append(
            Cell(
                row.label,
                column.label,
                label,
                ours,
                reference_value(paper, row.label, column.label, metric),
                n,
                mspec.digits_or(2),
            )
        )
    extra = report if report is not None else {}
    for key, label in EXTRA.items() if report is not None else ():
        v = extra[key]
        ours = None if v is None else v * 100
        cells.append(Cell(row.label, column.label, label, ours, None, n, 1))
    return cells


def agreement_cells(
    spec: TableSpec, runs: Sequence[RunRecord], judges: Mapping[str, CaimJudge]
) -> tuple[list[Cell], list[RunRecord]]:
    """Return the cells (ours beside the paper's) and the runs they came from.

    ``judges`` maps each rater label to its built CAIM judge; a column reads its newest run.
    """
    cells, used = [], []
    for column in spec.need("columns"):
        matched = sorted(select(runs, column.select), key=lambda r: r.stamp)
        scores = rater_scores(matched[-1], judges) if matched else {}
        used += matched[-1:]
        for row in spec.need("rows"):
            if row.metric is None:
                raise spec.error(
                    "rows", f"{row.label}: metric missing (the metric its raters score)"
                )
            report = None
            if by_rater := scores.get(row.metric):
                _, items, matrix = align_ratings(by_rater)
                report = agreement_report(matrix) if len(items) else None
            cells += _cells(spec, row, column, report)
    return cells, used


def agreement_table(spec: TableSpec, ctx: TableContext) -> BuiltTable:
    """Builder of Table 2: the raters (built by the table command) rescore the runs' answers."""
    raters = _raters(spec)
    make = ctx.need("make_caim_judge")
    judges = {r["label"]: make({k: v for k, v in r.items() if k != "label"}) for r in raters}
    cells, used = agreement_cells(spec, ctx.runs, judges)
    header = {
        "raters": "; ".join(
            f"{r['label']} = {', '.join(f'{k}={v}' for k, v in r.items() if k != 'label')}"
            for r in raters
        ),
        "paper raters": "3 human annotators (sec. 4.1.4)",
        "statistics": STATISTICS,
    }
    return BuiltTable(cells, runs=used, header=header)
