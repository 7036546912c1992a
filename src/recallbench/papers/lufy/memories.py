"""What the LUFY systems kept: agreement with the annotators (Tables 12, 14), top-k (Table 15).

Agreement (LUFY sec. 5.4 "Memory matching rate"): a system's binary label of a session's user
utterance is "its utterance pair is retained right after that session's forgetting" (the
snapshot the QA protocol stores after ``observe``). For each annotator, the share of the kept
utterances the annotator marked important, pooled over users; the mean over annotators is the
table value. (Random) is the exact expectation of that share for a uniform random choice of as
many utterances per user-session; (Annotators) the mean over ordered annotator pairs (a, b) of
P(b marks important | a marks important). ``Avg.`` is the mean of the session values.

Every cell has its episode-clustered interval (``papers.lufy.intervals``). Table 15 (top-k):
``papers.lufy.topk``.

Builder (``table.builder``): ``agreement_table`` (Tables 12, 14; rows select runs, ``random:
true`` / ``annotators: true`` rows give the baselines; option ``scale``, default 100).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from recallbench.analysis import select
from recallbench.metrics.clusters import ClusterStatistic
from recallbench.papers.lufy.intervals import (
    agreement_statistic,
    interval_fields,
    mean_statistic,
)
from recallbench.papers.lufy.runs import lufy_reference, paper_value, run_episodes, snapshots
from recallbench.records import Episode, MemoryItem, in_memory
from recallbench.run.read import RunRecord
from recallbench.tables import BuiltTable, Cell, TableContext, TableSpec
from recallbench.tables.entry import Entry

# -- Table 12 / 14: system-human agreement -------------------------------------------------

Labels = dict[str, dict[str, int]]  # user turn id -> {annotator: 0/1}
# a column's (value, n, statistic that recomputes the value from resampled episodes)
CellValue = tuple[float, int, ClusterStatistic | None]
Kept = tuple[Labels, set[str]]  # one episode's labels and the turn ids its memory kept


def session_labels(episode: Episode) -> dict[int, Labels]:
    """Return {session index: {user turn id: {annotator: label}}} of the labelled turns."""
    out: dict[int, Labels] = {}
    for session in episode.sessions:
        out[session.index] = {
            t.turn_id: {str(a): int(v) for a, v in t.labels["importance"].items()}
            for t in session.turns
            if t.labels.get("importance")
        }
    return out


def selected_turns(
    items_by_session: dict[int, list[MemoryItem]], labels: dict[int, Labels]
) -> dict[int, set[str]]:
    """Return {session: user turn ids the system kept} for the pairs written in that session.

    The system's binary label of a session's utterance is "retained right after that session's
    forgetting": its utterance pair is in the snapshot with ``attrs.retained`` true.
    """
    out: dict[int, set[str]] = {}
    for index, items in items_by_session.items():
        own = labels.get(index, {})
        out[index] = {
            i.source_ids[0]
            for i in items
            if i.kind == "utterance_pair"
            and i.source_ids
            and i.source_ids[0] in own
            and in_memory(i)
        }
    return out


def _annotators(records: Sequence[tuple[Labels, set[str]]]) -> list[str]:
    return sorted({a for labels, _ in records for lab in labels.values() for a in lab}, key=str)


def system_agreement(records: Sequence[tuple[Labels, set[str]]]) -> tuple[float, int]:
    """Mean over annotators of the share of system-kept turns that annotator marked important.

    ``records``: (labels of one episode-session, turn ids the system kept there); hits and
    counts are pooled over records per annotator. Returns (agreement, kept turns).
    """
    shares, kept = [], sum(len(sel) for _, sel in records)
    for a in _annotators(records):
        pairs = [labels[t][a] for labels, sel in records for t in sel if a in labels.get(t, {})]
        if pairs:
            shares.append(sum(pairs) / len(pairs))
    return (sum(shares) / len(shares) if shares else 0.0), kept


def random_agreement(records: Sequence[tuple[Labels, set[str]]]) -> tuple[float, int]:
    """Expected ``system_agreement`` of a uniform random choice of as many turns per record."""
    shares = []
    for a in _annotators(records):
        expected = chosen = 0.0
        for labels, sel in records:
            mine = [lab[a] for lab in labels.values() if a in lab]
            k = sum(1 for t in sel if a in labels.get(t, {}))
            if mine and k:
                expected += k * sum(mine) / len(mine)
                chosen += k
        if chosen:
            shares.append(expected / chosen)
    return (sum(shares) / len(shares) if shares else 0.0), sum(len(s) for _, s in records)


def annotator_agreement(label_maps: Sequence[Labels]) -> tuple[float, int]:
    """Mean over ordered annotator pairs (a, b) of P(b marks important | a marks important)."""
    annotators = sorted({a for labels in label_maps for lab in labels.values() for a in lab})
    shares, n = [], 0
    for a in annotators:
        for b in annotators:
            if a == b:
                continue
            both = [
                lab[b]
                for labels in label_maps
                for lab in labels.values()
                if lab.get(a) == 1 and b in lab
            ]
            if both:
                shares.append(sum(both) / len(both))
                n += len(both)
    return (sum(shares) / len(shares) if shares else 0.0), n


def agreement_records(run: RunRecord) -> dict[int, list[tuple[Labels, set[str]]]]:
    """Return {session: [(labels, kept turn ids) per episode]} of one run."""
    return {s: [r for _, r in recs] for s, recs in _records(run).items()}


def _records(run: RunRecord) -> dict[int, list[tuple[str, tuple[Labels, set[str]]]]]:
    """Return {session: [(episode id, (labels, kept turn ids))]} of one run."""
    episodes = run_episodes(run)
    out: dict[int, list[tuple[str, Kept]]] = {}
    for episode_id, by_session in snapshots(run, episodes).items():
        labels = session_labels(episodes[episode_id])
        for index, kept in selected_turns(by_session, labels).items():
            out.setdefault(index, []).append((episode_id, (labels.get(index, {}), kept)))
    return out


def _pooled_records(runs: Sequence[RunRecord]) -> dict[int, list[tuple[str, Kept]]]:
    records: dict[int, list[tuple[str, Kept]]] = {}
    for run in runs:
        for index, recs in _records(run).items():
            records.setdefault(index, []).extend(recs)
    return records


def _row_values(
    row: Entry,
    columns: Sequence[Entry],
    records: dict[int, list[tuple[str, Kept]]],
) -> dict[str, CellValue | None]:
    """Return {column label: (value, n, statistic) or None} of one row (``Avg.``: mean of the
    sessions); the statistic recomputes the value from resampled episodes (its interval)."""
    if row.annotators:
        fn: Callable[[Sequence[Kept]], tuple[float, int]] = lambda recs: (  # noqa: E731
            annotator_agreement([lab for lab, _ in recs])
        )
    else:
        fn = random_agreement if row.random else system_agreement
    per_session: dict[str, CellValue | None] = {}
    for column in columns:
        if column.session is None:
            continue
        tagged = records.get(column.session, [])
        recs = [r for _, r in tagged]
        if not recs and not row.annotators:
            per_session[column.label] = None
            continue
        stat = agreement_statistic([e for e, _ in tagged], recs, lambda rs: fn(rs)[0])
        per_session[column.label] = (*fn(recs), stat)
    values = [v for v in per_session.values() if v is not None]
    average: CellValue | None = None
    if values:
        mean = sum(v[0] for v in values) / len(values)
        average = (mean, sum(v[1] for v in values), mean_statistic([v[2] for v in values]))
    return {c.label: per_session.get(c.label, average) for c in columns}


def agreement_cells(
    spec: TableSpec, runs: Sequence[RunRecord]
) -> tuple[list[Cell], list[RunRecord]]:
    """Return the cells of an agreement table (rows: systems, (Random), (Annotators)) with the
    episode-clustered interval of each (``papers.lufy.intervals``)."""
    reference = lufy_reference(spec.id)
    scale, cells, used = spec.option("scale", 100), [], {}
    columns = spec.need("columns")
    for row in spec.need("rows"):
        matched = select(runs, row.select)
        used.update({r.path: r for r in matched})
        by_column = _row_values(row, columns, _pooled_records(matched))
        for column in columns:
            got = by_column[column.label]
            ours = None if got is None or not matched else got[0] * scale
            paper = paper_value(reference, row.label, column.label, "agreement")
            n = None if got is None else got[1]
            extra = interval_fields(got[2], scale) if got is not None and ours is not None else {}
            if row.annotators:  # the labels' own agreement: no run setting enters it
                extra["comparable"] = True
            cells.append(Cell(row.label, column.label, "agreement", ours, paper, n, 1, **extra))
    return cells, list(used.values())


def agreement_table(spec: TableSpec, ctx: TableContext) -> BuiltTable:
    """Builder of Tables 12 and 14: system-human agreement from the runs' memory snapshots."""
    cells, used = agreement_cells(spec, ctx.runs)
    row_runs = {row.label: select(ctx.runs, row.select) for row in spec.need("rows")}
    return BuiltTable(cells, runs=used, row_runs=row_runs)
