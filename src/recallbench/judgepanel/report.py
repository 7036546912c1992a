"""Write a panel's results: two tables (md/tex/csv), a figure (PNG/PDF), panel.json, verdicts.

Into ``out_dir`` (the command's default: ``<run>/judge_panel/``, beside the predictions it
re-scores; a rerun replaces the files):

- ``judge_panel.{md,tex,csv}``: one row per judge: the headline metric on the run's own
  answers (precision, recall, F1, %) and the acceptance (%) of every probe, each with its 95%
  episode-clustered interval; a last row gives the spread (max - min) across judges.
- ``judge_panel_agreement.{md,tex,csv}``: agreement between judges per set of answers and
  over all of them (percent and pairwise agreement, Fleiss' kappa, ICC(A,1)), and Cohen's
  kappa of every pair of judges over all items.
- ``judge_panel.{png,pdf}``: acceptance per probe per judge (bars with intervals).
- ``panel.json`` (everything above as numbers, the judges' descriptions, LLM usage) and
  ``verdicts.jsonl``: one line per judge and judged text: ``judge`` (the panel judge's label),
  ``set``, ``item``, ``episode_id``, ``question``, ``reference``, ``answer``, then the verdict
  in the one verdict shape (``recallbench.verdict.Verdict.to_dict``: label, score = credit,
  raw, failure, usage ...). ``read_verdicts`` reads it back, and the rows the panel wrote
  before issue 47 (``credit``, ``dont_know``, ``raw``, ``failure``: ``Verdict.from_dict``).

Tables go through ``tables.render`` and the figure through ``tables.figure`` with the run's
table header (``tables.header_for``: generator, embedder, data, episodes, code), the judge line
naming the panel's judges, so they carry the same facts as every paper table.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from recallbench.analysis import runs_in
from recallbench.errors import DatasetFormatError
from recallbench.io import write_json, write_jsonl_rows
from recallbench.judgepanel.panel import ANSWERS, Judged, PanelResult
from recallbench.judgepanel.probes import WRONG_PROBES
from recallbench.judgepanel.variants import OWN_VARIANT, VARIANTS, JudgeInput
from recallbench.tables import Cell, header_for, render
from recallbench.tables.figure import FigureSpec, render_figure
from recallbench.verdict import Verdict

TABLE = "judge_panel"
AGREEMENT_TABLE = "judge_panel_agreement"
METRIC_LABELS = {"precision": "Precision", "recall": "Recall", "f1": "F1"}
SPREAD_ROW = "spread (max - min)"
UNTESTED = (  # the table engine's note (tables.engine.UNTESTED) in the panel's terms
    "no test between rows: no pair of judges is tested; the judges and the spread (max - min) "
    "are described side by side, and a gap between two judges is not evidence that one "
    "credits differently from the other"
)
AGREEMENT_COLUMNS = {
    "percent_agreement": ("Percent agr.", 100),
    "pairwise_agreement": ("Pairwise agr.", 100),
    "fleiss_kappa": ("Fleiss kappa", 1),
    "icc_a1": ("ICC(A,1)", 1),
}


def _scale(value: float | None) -> float | None:
    return None if value is None else 100 * value


def _pct(entry: Mapping[str, Any], row: str, column: str, metric: str) -> Cell:
    ci = entry.get("ci95") or (None, None)
    return Cell(
        row,
        column,
        metric,
        _scale(entry.get("value")),
        None,
        entry.get("n"),
        1,
        entry.get("n_clusters"),
        _scale(ci[0]),
        _scale(ci[1]),
    )


def _row_label(result: PanelResult, judge: Mapping[str, Any]) -> str:
    own = judge.get("variant") == OWN_VARIANT[result.protocol]
    return f"{judge['label']}{' *' if own else ''}"


def panel_cells(result: PanelResult) -> list[Cell]:
    """Cells of the main table: headline metric and probe acceptance per judge, then spread."""
    cells = []
    for judge in result.judges:
        label = judge["label"]
        row = _row_label(result, judge)
        for metric, name in METRIC_LABELS.items():
            cells.append(_pct(result.headline[label][metric], row, name, "answers %"))
        for probe in result.options.probes:
            cells.append(_pct(result.acceptance[label][probe], row, probe, "acceptance %"))
    for metric, name in METRIC_LABELS.items():
        s = result.spread[metric]
        value = None if s is None else 100 * s["range"]
        cells.append(
            Cell(
                SPREAD_ROW, name, "answers %", value, None, None if s is None else s["n_judges"], 1
            )
        )
    return cells


def agreement_cells(result: PanelResult) -> list[Cell]:
    """Cells of the agreement table: per set and over all items, then Cohen's kappa per pair."""
    cells = []
    for name, report in result.agreement.items():
        row = "all items" if name == "all" else name
        for key, (column, scale) in AGREEMENT_COLUMNS.items():
            value = None if report is None or report[key] is None else scale * report[key]
            n = None if report is None else report["n_items"]
            cells.append(Cell(row, column, key, value, None, n, 2 if scale == 1 else 1))
    overall = result.agreement.get("all") or {}
    for pair in overall.get("pairs", []):
        row, n = f"{pair['a']} ~ {pair['b']}", overall["n_items"]
        cells.append(Cell(row, "Percent agr.", "agreement", 100 * pair["agreement"], None, n, 1))
        cells.append(Cell(row, "Cohen kappa", "cohen_kappa", pair["cohen_kappa"], None, n, 2))
    return cells


def panel_header(result: PanelResult) -> dict[str, str]:
    """The run's table header with the panel's judges in the judge line."""
    runs = [r for r in runs_in(result.run_dir, finished=False) if r.path == result.run_dir]
    header = header_for(runs) if runs else {}
    header["run judge"] = header.pop("judge", "n/a")
    header["judge"] = "panel: " + "; ".join(j["label"] for j in result.judges)
    unavailable = [j["label"] for j in result.judges if j.get("status") == "unavailable"]
    if unavailable:
        header["unavailable"] = f"{', '.join(unavailable)} (no LLM offline: n/a, never imitated)"
    offline = [j["label"] for j in result.judges if j.get("status") == "offline twin"]
    if offline:
        header["offline twins"] = f"{', '.join(offline)}: lexical rules standing in for an LLM"
    c = result.counts
    header["items"] = (
        f"{c['answers']} answers to {c['questions']} questions in {c['episodes']} episodes "
        f"({c['skipped_no_reference']} without a gold answer left out)"
    )
    o = result.options
    header["probes"] = f"seed {o.seed}, {o.distractors} distractors (recallbench.judgepanel.probes)"
    return header


def _notes(result: PanelResult) -> list[str]:
    own = OWN_VARIANT[result.protocol]
    notes = [
        f"* = the judge prompt of this protocol's paper ({own}: {VARIANTS[own].source})",
        f"headline of {result.protocol}: {result.headline_metric}; Recall = accuracy = mean "
        "credit over all answers (CAIM partial credit 0.5)",
        "probes: gold = the gold answer; specific_wrong = another question's gold answer; "
        "vague = the question's topic words without the gold content; verbose = gold among "
        "distractors; verbose_wrong = the distractors alone; empty = ''. "
        f"Accepting {', '.join(WRONG_PROBES)} is accepting a wrong answer",
        "acceptance = mean credit (%) with its 95% episode-clustered bootstrap interval",
    ]
    notes += [f"{v.name}: {v.source}" for v in VARIANTS.values() if v.paper is None]
    if sum(1 for h in result.headline.values() if h["recall"]["value"] is not None) >= 2:
        notes.append(UNTESTED)
    return notes


def write_report(result: PanelResult, out_dir: str | Path) -> dict[str, Path]:
    """Write every file of the panel into ``out_dir``; return {name: path}."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    header = panel_header(result)
    title = f"Judge robustness panel: {result.run_dir.name} ({result.protocol})"
    cells = panel_cells(result)
    paths = {
        f"table.{k}": v
        for k, v in render(
            cells,
            paper=None,
            table=TABLE,
            title=title,
            header=header,
            out_dir=out,
            notes=_notes(result),
            corner="judge",
            show_n=False,
        ).items()
    }
    agreement = agreement_cells(result)
    if agreement:
        paths |= {
            f"agreement.{k}": v
            for k, v in render(
                agreement,
                paper=None,
                table=AGREEMENT_TABLE,
                title=f"{title}: agreement",
                header=header,
                out_dir=out,
                corner="items",
                show_n=False,
                notes=[
                    "statistics over credits on the items every available judge scored "
                    "(metrics.agreement); n/a = undefined (no variance) or < 2 judges"
                ],
            ).items()
        }
    probe_cells = [c for c in cells if c.metric == "acceptance %"]
    spec = FigureSpec(
        kind="bar", x="columns", series="rows", x_label="probe", y_label="acceptance (%)"
    )
    paths |= {
        f"figure.{k}": v
        for k, v in render_figure(
            probe_cells, spec, stem=TABLE, title=title, header=header, out_dir=out
        ).items()
    }
    paths["json"] = out / "panel.json"
    write_json(paths["json"], {**result.to_dict(), "header": header}, allow_nan=False)
    paths["verdicts"] = out / "verdicts.jsonl"
    write_jsonl_rows(paths["verdicts"], _verdict_rows(result))
    return paths


# the keys of a verdicts.jsonl row beside its verdict (the verdict's judge is the label)
ROW_KEYS = ("judge", "set", "item", "episode_id", "question", "reference", "answer")


def _verdict_rows(result: PanelResult) -> list[dict[str, Any]]:
    return [
        {
            "judge": label,
            "set": r.set,
            "item": r.item,
            "episode_id": r.episode_id,
            "question": r.input.question,
            "reference": r.input.reference,
            "answer": r.input.answer,
            **r.verdict.to_dict(),
        }
        for label, rows in result.judged.items()
        for r in rows
    ]


def read_verdicts(path: str | Path) -> dict[str, list[Judged]]:
    """Read a ``verdicts.jsonl`` (module docstring): judge label -> its judged texts, in order.

    Raises DatasetFormatError naming the file and line of a row that is not a panel verdict.
    """
    path = Path(path)
    out: dict[str, list[Judged]] = {}
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                label, judged = _judged(json.loads(line))
            except ValueError as exc:  # json's errors, Verdict.from_dict's and missing keys
                raise DatasetFormatError(f"{path} line {number}: {exc}") from None
            out.setdefault(label, []).append(judged)
    return out


def _judged(row: Any) -> tuple[str, Judged]:
    if not isinstance(row, dict):
        raise ValueError(f"expected a JSON object, got {type(row).__name__}")
    missing = [k for k in ROW_KEYS if not isinstance(row.get(k), str)]
    if missing:
        raise ValueError(f"{missing} missing or not text (expected {list(ROW_KEYS)} + a verdict)")
    given = JudgeInput(row["question"], row["reference"], row["answer"])
    verdict = Verdict.from_dict(row)
    return row["judge"], Judged(row["set"], row["item"], row["episode_id"], given, verdict)


__all__ = [
    "ANSWERS",
    "ROW_KEYS",
    "agreement_cells",
    "panel_cells",
    "panel_header",
    "read_verdicts",
    "write_report",
]
