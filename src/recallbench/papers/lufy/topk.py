"""LUFY App. A, Table 15: the cosine rank of the memory that answers each question.

For each question, the memory that answers it is found automatically (``answering_memory``)
among the pairs of the question's session, and ranked by cosine similarity against every
retained memory of the store right after that session. Each cumulative ratio has its
episode-clustered interval (``papers.lufy.intervals``).

Builder (``table.builder``): ``topk_table`` (option ``select``: the runs whose stores are ranked,
with the embedder each was run with, built by the table command).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from recallbench.analysis import select
from recallbench.embed.base import TextEmbedder
from recallbench.papers.lufy.intervals import IntervalFields, interval_fields, ratio_statistic
from recallbench.papers.lufy.runs import lufy_reference, paper_value, run_episodes, snapshots
from recallbench.records import in_memory
from recallbench.run.read import RunRecord
from recallbench.tables import BuiltTable, Cell, TableContext, TableSpec

TOPK = 10
STORE_KINDS = ("utterance_pair", "summary")


def _within(k: int, rank: int) -> float:
    return float(rank <= k)


def answering_memory(
    question: str, label: str, texts: Sequence[str], threshold: float = 0.5
) -> int | None:
    """Return the index of the text that best covers ``label`` (None when none covers enough).

    Coverage is the lexical judge's (key words of the label answer found in the memory, numbers
    required); ties go to the earliest text (the first mention in the session).
    """
    from recallbench.judges.lexical import match

    best, best_cov = None, 0.0
    for i, text in enumerate(texts):
        m = match(question, label, text)
        if not m.numbers_missing and m.coverage >= threshold and m.coverage > best_cov:
            best, best_cov = i, m.coverage
    return best


def topk_ranks(run: RunRecord, embedder: TextEmbedder) -> list[tuple[str, int | None]]:
    """Return, per question of the run, its episode and the cosine rank of its answering memory.

    The store is the run's snapshot right after the question's session (retained utterance
    pairs and summaries); the answering memory is searched among the utterance pairs written in
    that session (``answering_memory``). None: no memory covers the label answer (the paper
    dropped 15 multi-hop questions by hand; we drop those we cannot match automatically).
    """
    episodes = run_episodes(run)
    ranks: list[tuple[str, int | None]] = []
    for episode_id, by_session in snapshots(run, episodes).items():
        episode = episodes[episode_id]
        own = {i: {t.turn_id for t in s.turns} for i, s in ((s.index, s) for s in episode.sessions)}
        for qa in episode.qa:
            store = [
                i
                for i in by_session.get(qa.after_session, [])
                if i.kind in STORE_KINDS and in_memory(i)
            ]
            pairs = [
                i
                for i in store
                if i.kind == "utterance_pair"
                and i.source_ids
                and i.source_ids[0] in own.get(qa.after_session, set())
            ]
            found = answering_memory(qa.question, " / ".join(qa.answers), [i.text for i in pairs])
            if found is None or not store:
                ranks.append((episode_id, None))
                continue
            vectors = embedder.encode([i.text for i in store] + [qa.question])
            cosines = vectors[:-1] @ vectors[-1]
            target = store.index(pairs[found])
            ranks.append((episode_id, 1 + sum(1 for c in cosines if c > cosines[target])))
    return ranks


def topk_cells(
    spec: TableSpec, ranks: Sequence[int | None], episodes: Sequence[str] | None = None
) -> tuple[list[Cell], list[str]]:
    """Return Table 15 cells (cumulative top-k ratios in %) and notes on the question counts.

    With ``episodes`` (each question's episode) every ratio gets its episode-clustered interval.
    """
    reference = lufy_reference(spec.id)
    found = [r for r in ranks if r is not None]
    where = [e for e, r in zip(episodes or [], ranks, strict=False) if r is not None]

    def extra(hit: Callable[[int], float]) -> IntervalFields:
        return (
            interval_fields(ratio_statistic(where, [hit(r) for r in found]), 100) if where else {}
        )

    column = "Ratio (%)"
    cells = []
    for k in range(1, TOPK + 1):
        ours = 100 * sum(1 for r in found if r <= k) / len(found) if found else None
        row = f"Top {k}"
        cells.append(
            Cell(
                row,
                column,
                "ratio",
                ours,
                paper_value(reference, row, column, "ratio"),
                len(found) or None,
                1,
                **extra(partial(_within, k)),
            )
        )
    row = f"(Not in Top {TOPK})"
    ours = 100 * sum(1 for r in found if r > TOPK) / len(found) if found else None
    paper = paper_value(reference, row, column, "ratio")
    outside = extra(lambda r: float(r > TOPK))
    cells.append(Cell(row, column, "ratio", ours, paper, len(found) or None, 1, **outside))
    notes = [
        f"questions: {len(ranks)}; answering memory found automatically: {len(found)}; "
        f"dropped (no memory covers the label answer): {len(ranks) - len(found)}"
    ]
    return cells, notes


def topk_table(spec: TableSpec, ctx: TableContext) -> BuiltTable:
    """Builder of Table 15: ranks in the stores of the runs ``table.select`` picks."""
    used = select(ctx.runs, spec.option("select", {}))
    make_embedder = ctx.need("make_embedder")
    pairs = [
        p
        for run in used
        for p in topk_ranks(run, make_embedder(dict(run.config.embedder.settings)))
    ]
    cells, notes = topk_cells(spec, [r for _, r in pairs], [e for e, _ in pairs])
    # every row (Top k) is a ratio over the same runs' stores: the engine's notes (no test
    # between rows, identical rows) name them
    row_runs = {cell.row: list(used) for cell in cells}
    return BuiltTable(cells, runs=used, notes=notes, row_runs=row_runs)
