"""THEANINE's human evaluations of its own phases: Table 6 (App. I) and Fig. 7 (App. E.2).

- Table 6, memory summarization: "100 randomly sampled sessions from MSC and CC", judged on
  whether the session's memories "contain faulty statements" and "miss important statements"
  (No / Can't judge / Yes). ``SUMMARIES`` / ``summary_units``: a session's dialogue and the
  memory sentences THEANINE wrote from it (the run's snapshot after that session).
- Fig. 7, intermediate phases: whether relation-aware linking "properly assigns cause-effect
  relations to linked memories" (paper: 92% agree) and whether timeline refinement "elicits
  more helpful information" for the next response (100%). ``PHASES`` / ``phase_units``: linked
  memory pairs of THEANINE's graphs (the final snapshot's edges), and turns where THEANINE's
  refined timelines and the raw timelines of its "w/o Timeline Refinement" run (same retrieval,
  same seeds) were shown, side by side.

Units come from the runs of ``table.human.runs`` (``theanine_table2``: it has both variants),
``samples`` of each kind (default 100, the paper's), drawn with a seeded RNG. Each unit is
judged by several annotators and reported by the majority rule (App. E.2: 3 workers per
sample); a tie counts as the middle answer (Can't judge) in Table 6 and as Disagree in Fig. 7.
The notes give Fleiss' kappa per question (the paper reports no agreement statistic).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence

from recallbench.analysis import select
from recallbench.humaneval import (
    Criterion,
    Rating,
    Study,
    Unit,
    agreement,
    export_header,
    majority,
    ratings_path,
    read_ratings,
)
from recallbench.memory import render_history
from recallbench.run.read import RunRecord
from recallbench.tables import BuiltTable, Cell, TableContext, TableSpec
from recallbench.tables.render import paper_values, reference_value

THREE = ("No", "Can't judge", "Yes")
SUMMARIES = Study(
    name="theanine_summaries",
    title="THEANINE Table 6: human evaluation of conversation-to-memory summarization",
    instructions=(
        "Each row shows one session of a conversation (context) and the memory sentences a "
        "chatbot summarized from it (text). Answer both questions about the memories."
    ),
    criteria=(
        Criterion(
            "faulty",
            "Contain faulty statements",
            "Do the memories contain faulty statements?",
            choices=THREE,
        ),
        Criterion(
            "missing",
            "Miss important statements",
            "Do the memories miss important statements?",
            choices=THREE,
        ),
    ),
)
AGREE = ("Agree", "Disagree")
PHASES = Study(
    name="theanine_phases",
    title="THEANINE Fig. 7: human evaluation of relation-aware linking and timeline refinement",
    instructions=(
        "Each row asks one question, stated at the end of its context. Linking rows show two "
        "memories of a conversation and the relation a chatbot assigned between them (text). "
        "Refinement rows show the current dialogue and raw timelines of past events (context) "
        "and the chatbot's refined version of them (text)."
    ),
    criteria=(
        Criterion(
            "agree", "Agree", "Do you agree with the statement of the question?", choices=AGREE
        ),
    ),
)
LINKING, REFINEMENT = "Relation-aware linking", "Timeline refinement"
LINK_Q = "Question: do you agree that the relation between the two memories is properly assigned?"
REFINE_Q = (
    "Question: do you agree that the refined version tailors the raw timelines into useful "
    "information for generating the next response?"
)


def _sample(units: list[Unit], spec: TableSpec, salt: str) -> list[Unit]:
    k = int(spec.option("samples", 100))
    rng = random.Random(f"{spec.option('seed', 0)}/{salt}")
    return sorted(rng.sample(units, min(k, len(units))), key=lambda u: u.unit_id)


def _theanine_runs(runs: Sequence[RunRecord], memory: str = "theanine") -> list[RunRecord]:
    return sorted(select(runs, {"memory": memory}), key=lambda r: r.path.name)


def summary_units(spec: TableSpec, ctx: TableContext) -> list[Unit]:
    """A session's dialogue and the memories THEANINE wrote from it, sampled."""
    units = []
    for run in _theanine_runs(ctx.runs):
        episodes, stores = run.dataset_episodes(), run.stores
        for (episode_id, after), items in stores.items():
            session = next((s for s in episodes[episode_id].sessions if s.index == after), None)
            written = [m.text for m in items if m.attrs.get("session") == after]
            if session is not None and written:
                unit_id = f"{run.choice('dataset')}:{episode_id}/s{after}"
                text = "\n".join(f"- {t}" for t in written)
                units.append(
                    Unit(unit_id, unit_id, render_history(session.turns), {"THEANINE": text})
                )
    return _sample(units, spec, "summaries")


def _link_units(run: RunRecord) -> list[Unit]:
    stores = run.stores
    last: dict[str, int] = {}
    for episode_id, after in stores:
        last[episode_id] = max(after, last.get(episode_id, 0))
    out = []
    for episode_id, after in last.items():
        items = {m.item_id: m for m in stores[episode_id, after]}
        for m in items.values():
            for edge in m.attrs.get("edges_in") or []:
                a = items.get(edge["from"])
                if a is None:
                    continue
                context = (
                    f"Memory A (session {a.attrs.get('session')}): {a.text}\n"
                    f"Memory B (session {m.attrs.get('session')}): {m.text}\n{LINK_Q}"
                )
                text = f"[A] - ({edge['relation']}) - [B]"
                unit_id = f"{run.choice('dataset')}:{episode_id}:{a.item_id}->{m.item_id}"
                out.append(Unit(unit_id, f"linking:{unit_id}", context, {LINKING: text}))
    return out


def _refine_units(refined: RunRecord, raw: RunRecord) -> list[Unit]:
    episodes = refined.dataset_episodes()
    raws = {p.pred_id: p for p in raw.predictions}
    out = []
    for p in refined.predictions:
        other = raws.get(p.pred_id)
        text, before = p.meta.get("recall_text"), other and other.meta.get("recall_text")
        if p.kind != "response" or not text or not before or text == before:
            continue
        turn_id = p.pred_id.removesuffix("/response")
        session = next(s for s in episodes[p.episode_id].sessions if s.index == p.session_index)
        upto = next(i for i, t in enumerate(session.turns) if t.turn_id == turn_id)
        dialogue = render_history(session.turns[max(0, upto - 5) : upto])
        context = f"Current dialogue:\n{dialogue}\n\nRaw timelines:\n{before}\n\n{REFINE_Q}"
        unit_id = f"{refined.choice('dataset')}:{p.pred_id}"
        out.append(Unit(unit_id, f"refinement:{unit_id}", context, {REFINEMENT: text}))
    return out


def phase_units(spec: TableSpec, ctx: TableContext) -> list[Unit]:
    """Linked memory pairs and refined-vs-raw timelines, ``samples`` of each."""
    links, refines = [], []
    raw_runs = {r.choice("dataset"): r for r in _theanine_runs(ctx.runs, "theanine_no_refinement")}
    for run in _theanine_runs(ctx.runs):
        links += _link_units(run)
        if (raw := raw_runs.get(run.choice("dataset"))) is not None:
            refines += _refine_units(run, raw)
    return _sample(links, spec, "linking") + _sample(refines, spec, "refinement")


def _shares(
    votes: Mapping[tuple[str, str], str], choices: Sequence[str], system: str
) -> tuple[dict[str, float | None], int]:
    labels = [v for (_, s), v in votes.items() if s == system]
    counts = Counter(labels)
    return {c: 100.0 * counts[c] / len(labels) if labels else None for c in choices}, len(labels)


def _table(
    spec: TableSpec,
    ctx: TableContext,
    study: Study,
    rows: list[tuple[str, str, str]],
    choices: Sequence[str],
    tie: str,
) -> BuiltTable:
    """Cells: for each (row label, criterion, system), the % of units per majority label."""
    path = ratings_path(ctx.results_dir, study)
    ratings: list[Rating] = read_ratings(study, path) if path.exists() else []
    reference = paper_values("theanine", spec.id)
    cells, notes = [], []
    for label, criterion, system in rows:
        shares, n = _shares(majority(ratings, criterion, tie), choices, system)
        for choice in choices:
            paper = reference_value(reference, label, "human", choice)
            cells.append(Cell(label, choice, "%", shares[choice], paper, n or None, 1))
        report = agreement(study, [r for r in ratings if r.system == system], criterion)
        kappa = None if report is None else report.get("fleiss_kappa")
        notes.append(
            f"{label}: Fleiss' kappa {'n/a' if kappa is None else f'{kappa:.2f}'} "
            "(paper: not reported)"
        )
    header = export_header(ctx.results_dir, study)
    header["judge"] = (
        f"human: {len({r.annotator for r in ratings})} annotators, majority rule (tie: {tie})"
        if ratings
        else f"no ratings imported: `recallbench human-eval export {spec.experiment}`, then "
        f"`recallbench human-eval import {spec.experiment} <filled sheets>`; until then only "
        "the paper's values are shown"
    )
    return BuiltTable(cells, header=header, notes=notes if ratings else [], corner="Memories that")


def table6(spec: TableSpec, ctx: TableContext) -> BuiltTable:
    """Builder of Table 6 (module docstring)."""
    rows = [(c.label, c.key, "THEANINE") for c in SUMMARIES.criteria]
    return _table(spec, ctx, SUMMARIES, rows, THREE, "Can't judge")


def figure7(spec: TableSpec, ctx: TableContext) -> BuiltTable:
    """Builder of Fig. 7 (module docstring): % of units the majority agrees with."""
    rows = [(LINKING, "agree", LINKING), (REFINEMENT, "agree", REFINEMENT)]
    built = _table(spec, ctx, PHASES, rows, AGREE, "Disagree")
    built.corner = "Phase"
    return built
