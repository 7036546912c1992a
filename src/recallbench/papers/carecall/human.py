"""CareCall's human evaluation (Bae et al. 2022, sec. 5.3, App. E; Tables 5, 8, 9 and Fig. 3).

The paper's crowdworkers held live five-session conversations with each model and, after every
session, rated five statements (App. E) from 0 to 100; scores were standardized per worker.
Live conversations cannot be replayed from run folders. This study rates what the runs hold:
each target session of an episode replayed with a model's replies (the user's real turns, the
model's generated reply at every bot turn), beside the user's earlier sessions (their gold
summaries), for the three models the paper compares (``table.rows``: Without memory, Memory
accumulate, Memory update; the ``carecall_table4`` runs).

``units`` builds the sheet's units; the builder ``human_table`` computes, from the imported
ratings (``recallbench.humaneval``), per option ``statistic``:

- ``standardized`` (Table 5): the mean of per-annotator z-scores per model and criterion;
- ``absolute`` (Table 9): the mean 0-100 rating;
- ``per_session`` (Table 8, Fig. 3): standardized means per session (Session 1 is the paper's
  only: every model is the same there, and the runs answer sessions 2-5).

Each number is a mean of unit scores (a unit: one model's replayed session, averaged over its
annotators) with a 95% t interval; every model is tested against ``reference_row`` (Memory
update) by a paired t-test over the sessions both were rated on (the paper names no test),
Holm-corrected across the table. Notes give Pearson's r of memorability with engagingness and
with humanness over the rated sessions (paper: 0.68 and 0.47, p < 0.01) and the inter-annotator
agreement per criterion (ICC(A,1); the paper reports none). Without imported ratings the cells
show the paper's values only and the header says how to run the study.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from recallbench.analysis import select
from recallbench.humaneval import (
    Criterion,
    Rating,
    Study,
    Unit,
    agreement,
    export_header,
    paired,
    pearson,
    ratings_path,
    read_ratings,
    standardize,
    summary,
    unit_scores,
)
from recallbench.metrics.bootstrap import holm
from recallbench.records import Episode, Session
from recallbench.run.read import RunRecord
from recallbench.tables import BuiltTable, Cell, TableContext, TableSpec
from recallbench.tables.entry import Entry
from recallbench.tables.render import paper_values, reference_value

SCALE = (0.0, 100.0)
# App. E, verbatim statements.
CRITERIA = (
    Criterion(
        "coherence",
        "Coherence",
        "This chatbot understood the context and responded coherently.",
        SCALE,
    ),
    Criterion(
        "consistency",
        "Consistency",
        "This chatbot was consistent throughout the conversation.",
        SCALE,
    ),
    Criterion(
        "engagingness",
        "Engagingness",
        "I would like to chat with this chatbot for a longer time.",
        SCALE,
    ),
    Criterion("humanness", "Humanness", "This chatbot sounded like a human.", SCALE),
    Criterion("memorability", "Memorability", "This chatbot remembered what I said before.", SCALE),
)
STUDY = Study(
    name="carecall_human",
    title="Keep Me Updated! human evaluation: rate each chatbot session (Tables 5, 8, 9; Fig. 3)",
    instructions=(
        "Each row is one session of a care-call conversation: the user's real turns and one "
        "chatbot's replies (chatbots are hidden behind letters). The context gives what the user "
        "said in earlier sessions. Read the session, then rate the degree to which you agree "
        "with each statement on a scale of 0-100 (Bae et al. 2022, App. E). Rate every session "
        "of a chatbot in order: the same letter is the same chatbot across a group's sessions."
    ),
    criteria=CRITERIA,
)
CORRELATIONS = (("memorability", "engagingness", 0.68), ("memorability", "humanness", 0.47))
STATISTICS = ("standardized", "absolute", "per_session")


def _newest(runs: Sequence[RunRecord], row: Entry) -> RunRecord | None:
    found = select(runs, row.select)
    return max(found, key=lambda r: r.stamp) if found else None


def _transcript(session: Session, replies: dict[str, str]) -> str:
    lines = []
    for turn in session.turns:
        text = replies.get(f"{turn.turn_id}/response", turn.text)
        role = "Bot" if turn.speaker == "system" else "User"
        lines.append(f"{role}: {text}")
    return "\n".join(lines)


def _context(episode: Episode, index: int) -> str:
    earlier = [
        f"Session {s.index}: " + " / ".join(map(str, s.gold.get("summary") or ["(no summary)"]))
        for s in episode.sessions
        if s.index < index
    ]
    return "What the user said in earlier sessions:\n" + ("\n".join(earlier) or "(nothing)")


def units(spec: TableSpec, ctx: TableContext) -> list[Unit]:
    """One unit per (episode, target session): each model's replayed session as a candidate
    (``ctx.runs``: the runs of ``table.human.runs``; option ``max_episodes``)."""
    replies: dict[str, dict[str, str]] = {}
    episodes: dict[str, Episode] = {}
    for row in spec.need("rows"):
        run = _newest(ctx.runs, row)
        if run is None:
            continue
        preds = run.predictions
        replies[row.label] = {p.pred_id: p.output for p in preds if p.kind == "response"}
        episodes = episodes or run.dataset_episodes()
    out = []
    limit = spec.option("max_episodes", None)
    for episode in sorted(episodes.values(), key=lambda e: e.episode_id)[:limit]:
        for session in episode.sessions:
            ids = {f"{t.turn_id}/response" for t in session.turns}
            shown = {m: _transcript(session, r) for m, r in replies.items() if ids & r.keys()}
            if shown:
                unit = Unit(
                    f"{episode.episode_id}/s{session.index}",
                    episode.episode_id,
                    _context(episode, session.index),
                    shown,
                    session.index,
                )
                out.append(unit)
    return out


def _scores(
    ratings: list[Rating], criterion: str, session: int | None
) -> dict[tuple[str, str], float]:
    """Unit scores of one criterion, of one session (``/s<k>`` units) or of all."""
    where = None if session is None else (lambda r: r.unit.endswith(f"/s{session}"))
    return unit_scores(ratings, criterion, where)


def human_table(spec: TableSpec, ctx: TableContext) -> BuiltTable:
    """Builder of Tables 5, 8 and 9 (module docstring); option ``statistic``."""
    statistic = str(spec.option("statistic"))
    if statistic not in STATISTICS:
        raise spec.error("statistic", f"expected one of {STATISTICS}, got {statistic!r}")
    path = ratings_path(ctx.results_dir, STUDY)
    raw = read_ratings(STUDY, path) if path.exists() else []
    ratings = raw if statistic == "absolute" else standardize(raw)
    reference = paper_values("carecall", spec.id)
    cells: list[Cell] = []
    tests: list[tuple[int, Any]] = []
    reference_row = spec.option("reference_row", None)
    for row in spec.need("rows"):
        for column in spec.need("columns"):
            for crit in CRITERIA:
                scores = _scores(ratings, crit.key, column.session)
                cell = _cell(row.label, column.label, crit, scores, statistic)
                paper = reference_value(reference, row.label, column.label, crit.key)
                cell = replace(cell, paper=paper)
                n = cell.n
                if n and reference_row and row.label != reference_row:
                    tests.append((len(cells), paired(scores, row.label, reference_row)))
                cells.append(cell)
    cells = _with_tests(cells, tests)
    header = {**export_header(ctx.results_dir, STUDY), **_header(raw, statistic)}
    return BuiltTable(cells, header=header, notes=_notes(raw))


def _cell(
    row: str, column: str, crit: Criterion, scores: dict[tuple[str, str], float], statistic: str
) -> Cell:
    """Our mean of ``row``'s unit scores with its 95% interval (no paper value yet)."""
    (mean, low, high), n = summary(scores, row)
    episodes = {unit.rsplit("/s", 1)[0] for unit, system in scores if system == row}
    return Cell(
        row,
        column,
        crit.label,
        mean if n else None,
        None,
        n,
        2 if statistic == "absolute" else 4,
        episodes=len(episodes) or None,
        ci_low=low if n > 1 else None,
        ci_high=high if n > 1 else None,
        comparable=False,
    )


def _with_tests(cells: list[Cell], tests: list[tuple[int, Any]]) -> list[Cell]:
    adjusted = holm([t.p for _, t in tests]) if tests else []
    for (i, t), p_holm in zip(tests, adjusted, strict=True):
        if t.n >= 2:
            cells[i] = replace(cells[i], p_value=t.p, p_holm=p_holm, significant=p_holm <= 0.05)
    return cells


def _header(raw: list[Rating], statistic: str) -> dict[str, str]:
    if not raw:
        return {
            "judge": (
                "no ratings imported: `recallbench human-eval export carecall_table5` writes the "
                "blinded sheet, `recallbench human-eval import carecall_table5 <filled sheets>` "
                "reads it back; until then only the paper's values are shown"
            )
        }
    annotators = sorted({r.annotator for r in raw})
    units = {(r.unit, r.system) for r in raw}
    return {
        "judge": f"human: {len(annotators)} annotators, {len(units)} rated sessions "
        f"({len({r.unit for r in raw})} replayed sessions x models); ratings {STUDY.name}",
        "statistic": {
            "standardized": "mean of per-annotator z-scores (each annotator's ratings of a "
            "statement standardized, as the paper's per-worker standardization)",
            "absolute": "mean 0-100 rating",
            "per_session": "mean of per-annotator z-scores per session",
        }[statistic],
        "comparability": "not comparable, no diff shown: ratings of replayed sessions (the "
        "user's real turns, the model's replies) vs the paper's live conversations with its "
        "fine-tuned HyperCLOVA models",
        "test": "paired t-test by rated session against the reference row (the paper names "
        "none), Holm-corrected across the table",
    }


def _notes(raw: list[Rating]) -> list[str]:
    if not raw:
        return []
    z = standardize(raw)
    notes = []
    for a, b, paper in CORRELATIONS:
        r, p, n = pearson(unit_scores(z, a), unit_scores(z, b))
        ours = "undefined" if r is None else f"r = {r:.2f} (p = {p:.3g}, n = {n})"
        notes.append(f"Pearson {a} vs {b}: {ours}; paper r = {paper:.2f} (p < 0.01)")
    for crit in CRITERIA:
        report = agreement(STUDY, raw, crit.key)
        got = "n/a (fewer than 2 annotators on shared sessions)"
        if report is not None and report["icc_a1"] is not None:
            got = f"ICC(A,1) = {report['icc_a1']:.2f} over {report['n_items']} sessions"
        notes.append(f"agreement, {crit.label}: {got}; paper: not reported")
    return notes
