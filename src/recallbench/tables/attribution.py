"""Builder of the failure-attribution tables (``conf/experiment/attribution_*.yaml``).

One row per memory method (``rows``: run selectors; with ``columns``, e.g. one per dataset, one
row per method and column, labelled ``<row> / <column>``), the measures side by side: the share of the method's failures in each
class of ``metrics.attribution`` (judge disagreement, evidence unknown, not in memory, not
retrieved, answered wrong from the evidence), the share of "not in memory" that was forgotten
(written, then dropped), the share of failures that were "don't know", the method's accuracy
(mean credit of the primary judge) on all items and on the items with known evidence, and the
oracle-context accuracy on those same items (the reader ceiling: the same reader given the gold
evidence instead of its recall). Every share and accuracy has its episode-clustered 95% CI.

Runs: the table's ``runs`` (usually ``{tag: [<the paper experiment>, <its oracle sweep>]}``);
a run whose ``protocol.oracle_context`` is true is an oracle run, every other one an actual run.
The runs of a cell are pooled item by item. A class that cannot occur in a row's runs (judge
disagreement with one judge) is n/a, not 0.

Options: ``evidence`` (locator settings, ``protocols.evidence``), ``primary`` (qa_gvd: ``caim``
or ``judge``), ``cover`` (``all`` | ``any``; default: the protocol's, ``analysis.attribution``),
``items_file`` (default true: also write ``<id>_items.csv``, one line per attributed failure).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from recallbench.analysis import select
from recallbench.analysis.attribution import RunAttribution, is_oracle, known_accuracy, run_items
from recallbench.io import write_text
from recallbench.metrics.attribution import CLASS_LABELS, CLASSES, ItemFacts, classify, summarize
from recallbench.run.read import RunRecord
from recallbench.tables.cell import FIXTURE, Cell
from recallbench.tables.comparability import is_fixture
from recallbench.tables.engine import BuiltTable, TableContext
from recallbench.tables.entry import Entry, MetricSpec
from recallbench.tables.spec import TableSpec

__all__ = ["MEASURES", "attribution_table"]

# measure -> (label, scale, digits)
MEASURES: dict[str, tuple[str, float, int]] = {
    "failures": ("failures", 1, 0),
    **{c: (f"% {CLASS_LABELS[c]}", 100, 1) for c in CLASSES},
    "forgotten": ("% of not in memory: forgotten", 100, 1),
    "dont_know": ("% don't know", 100, 1),
    "accuracy": ("accuracy %", 100, 1),
    "accuracy_known": ("accuracy % (evidence known)", 100, 1),
    "oracle_accuracy": ("oracle accuracy % (evidence known)", 100, 1),
}


def _entry(summary: Mapping[str, Any], measure: str) -> Mapping[str, Any] | None:
    if measure in CLASSES:
        entry: Mapping[str, Any] = summary["shares"][measure]
        return None if entry.get("applicable") is False else entry
    if measure == "forgotten":
        forgotten: Mapping[str, Any] = summary["not_in_memory_reasons"]["forgotten"]
        return forgotten
    if measure == "dont_know":
        dont_know: Mapping[str, Any] = summary["failure_outcomes"]["dont_know"]
        return dont_know
    other: Mapping[str, Any] | None = summary.get(measure)
    return other


def _cell(
    row: str,
    column: str,
    metric: str,
    entry: Mapping[str, Any] | None,
    spec: tuple[str, float, int],
    fixture: bool = False,
) -> Cell:
    """One cell; ``fixture``: its runs read the project's fixtures (shown as §k)."""
    label, scale, digits = spec
    if entry is None or (not entry.get("n") and metric != "failures"):
        return Cell(row, column, label, None, None, n=0 if entry else None, digits=digits)
    ci = entry.get("ci95")
    return Cell(
        row,
        column,
        label,
        entry["value"] if scale == 1 else entry["value"] * scale,
        None,
        n=int(entry["n"]),
        digits=digits,
        episodes=entry.get("n_clusters"),
        ci_low=None if ci is None else ci[0] * scale,
        ci_high=None if ci is None else ci[1] * scale,
        coverage=FIXTURE if fixture else "",
    )


def _read(
    runs: Sequence[RunRecord], spec: TableSpec, subset: str | None = None
) -> tuple[list[ItemFacts], list[RunAttribution], list[tuple[RunRecord, ItemFacts]]]:
    items: list[ItemFacts] = []
    infos: list[RunAttribution] = []
    owned = []
    for run in runs:
        got, info = run_items(
            run, spec.option("evidence", None), str(spec.option("primary", "auto")), subset
        )
        items += got
        infos.append(info)
        owned += [(run, i) for i in got]
    return items, infos, owned


def _measures(spec: TableSpec) -> dict[str, tuple[str, float, int]]:
    chosen = spec.metrics or {m: MetricSpec() for m in MEASURES}
    unknown = [m for m in chosen if m not in MEASURES]
    if unknown:
        raise spec.error(f"metrics.{unknown[0]}", f"expected one of {list(MEASURES)}")
    return {
        m: (
            chosen[m].label_or(MEASURES[m][0]),
            float(chosen[m].scale_or(MEASURES[m][1])),
            chosen[m].digits_or(MEASURES[m][2]),
        )
        for m in chosen
    }


def attribution_table(spec: TableSpec, ctx: TableContext) -> BuiltTable:
    """Cells of the attribution table from ``ctx.runs`` (see the module docstring)."""
    rows, columns = spec.need("rows"), spec.columns or (Entry(""),)
    measures = _measures(spec)
    cells, used, notes, failures, empty = [], {}, [], [], []
    row_runs: dict[str, list[RunRecord]] = {}  # the memory activity behind identical rows
    for row in rows:
        for column in columns:
            name = f"{row.label} / {column.label}" if column.label else row.label
            matched = select(select(ctx.runs, row.select), column.select)
            if not matched:
                empty.append(name)
            actual = [r for r in matched if not is_oracle(r)]
            oracle = [r for r in matched if is_oracle(r)]
            used.update({r.path: r for r in matched})
            row_runs[name] = actual
            items, infos, owned = _read(actual, spec, column.subset)
            oracle_items, _, _ = _read(oracle, spec, column.subset)
            cover = spec.option("cover", None) or (infos[0].cover if infos else "all")
            judges = max((len(i.judges) for i in infos), default=1)
            summary = summarize(items, cover, judges) if actual else None
            if summary is not None:
                summary["accuracy_known"] = known_accuracy(items)
                summary["failures"] = {"value": summary["failures"], "n": len(items)}
                failures += [(name, run, i, cover) for run, i in owned]
            if oracle:
                summary = summary or {"shares": {}}
                summary["oracle_accuracy"] = known_accuracy(oracle_items)
            fixture = any(is_fixture(r) for r in matched)  # never read as the real data's
            for measure, mspec in measures.items():
                entry = None if summary is None else _entry_safe(summary, measure)
                cells.append(_cell(name, mspec[0], measure, entry, mspec, fixture))
            if matched:
                notes += _row_notes(name, infos, actual, oracle, cover)
    if empty:
        notes.append(f"no runs (n/a): {', '.join(empty)}")
    files = {}
    if spec.option("items_file", True) and failures:
        files["items_csv"] = _items_file(spec, ctx, failures)
    notes.append("n of each value (items or failures it is a share of) and its episodes: the csv")
    return BuiltTable(
        cells, runs=list(used.values()), notes=notes, files=files, show_n=False, row_runs=row_runs
    )


def _entry_safe(summary: Mapping[str, Any], measure: str) -> Mapping[str, Any] | None:
    try:
        return _entry(summary, measure)
    except KeyError:  # an oracle-only cell has no attribution of actual runs
        return None


def _row_notes(
    where: str,
    infos: Sequence[RunAttribution],
    actual: Sequence[RunRecord],
    oracle: Sequence[RunRecord],
    cover: str,
) -> list[str]:
    judges = sorted({j for i in infos for j in i.judges})
    evidence = sorted({i.evidence for i in infos if i.evidence})
    parts = [f"{len(actual)} run(s), {len(oracle)} oracle run(s)"]
    if infos:
        parts.append(f"judges (primary first): {', '.join(infos[0].judges)}")
        parts.append(f"evidence: {'; '.join(evidence) or 'n/a'}; cover: {cover}")
    if len(judges) < 2 and actual:
        parts.append("one judge: judge disagreement n/a")
    return [f"{where}: " + "; ".join(parts)]


def _items_file(
    spec: TableSpec, ctx: TableContext, failures: list[tuple[str, RunRecord, Any, Any]]
) -> Path:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["row", "run", "item_id", "episode_id", "class", "outcome", "reason"])
    for row, run, item, cover in failures:
        got = classify(item, cover)
        if got is not None:
            run_key = f"{run.tag}/{run.stamp}/{run.job}"
            writer.writerow(
                [row, run_key, got.item_id, got.episode_id, got.cls, got.outcome, got.reason]
            )
    path = Path(ctx.results_dir) / "tables" / f"{spec.id}_items.csv"
    write_text(path, buf.getvalue())
    return path
