"""LUFY Table 7: the subjective evaluation, rerun by annotators on the released conversations.

The paper's third-party annotators rated each conversation (participant x system x session) on
personalization, flow of conversation and overall experience, 1-5, with the App. E rubrics,
reading a participant's sessions in chronological order; it reports the means per session
(Avg. = sessions 2-4), LUFY's paired t-tests against both other systems (†) and the ICC of
each criterion across annotators (0.31, 0.29, 0.32). The conversations are in the released
LUFY dataset (``DATA_DIR/lufy``), so the study can be rerun on the same logs:

- ``units``: one unit per (participant, session), each system's conversation a candidate; the
  sheet keeps a participant's sessions in order and one letter per system across them;
- ``table7``: the means of the imported ratings (``recallbench.papers.lufy.ux.ux_cells``: the
  same cells and paired t-tests of per-participant means as Tables 8 and 10) per criterion,
  plus a row with the ICC of each criterion over the conversations every annotator rated:
  ICC(2,1) (Shrout & Fleiss: two-way random, absolute agreement, single rater; the paper names
  Shrout & Fleiss but not the form), the paper's value beside.
"""

from __future__ import annotations

from dataclasses import replace

from recallbench.datasets import load
from recallbench.humaneval import (
    Criterion,
    Rating,
    Study,
    Unit,
    agreement,
    ratings_path,
    read_ratings,
    unit_scores,
)
from recallbench.memory import render_history
from recallbench.papers.lufy.runs import lufy_reference, paper_value, row_logs
from recallbench.papers.lufy.ux import Values, ux_cells
from recallbench.tables import BuiltTable, Cell, TableContext, TableSpec

SCALE = (1.0, 5.0)
# App. E, verbatim (the three questions; the rubrics are in the instructions).
CRITERIA = (
    Criterion(
        "personalization",
        "Personalization",
        "DID THE CHATBOT'S PERSONALIZATION APPEAR APPROPRIATE IN THE CONVERSATION?",
        SCALE,
    ),
    Criterion(
        "flow",
        "Flow of Conv.",
        "HOW WELL DID THE CONVERSATION FLOW WITHOUT FEELING DISJOINTED OR OUT OF CONTEXT?",
        SCALE,
    ),
    Criterion(
        "overall",
        "Overall",
        "OVERALL, HOW WOULD YOU RATE THE USER'S EXPERIENCE WITH THE CHATBOT?",
        SCALE,
    ),
)
RUBRICS = """\
Personalization: 1/5 (Very Poor): Responses feel generic and lack personalization. 2/5 (Poor):
Limited personalization attempts are often off-target or superficial. Responses only
occasionally reflect the user's context. 3/5 (Average): The chatbot shows moderate
personalization. Responses are relevant but may not fully address specific user needs. 4/5
(Good): The chatbot consistently personalizes well, matching responses to the user's context and
needs effectively. 5/5 (Excellent): Outstanding personalization. Responses are highly relevant,
context-aware, and perfectly meet the user's needs, enhancing engagement and satisfaction.

Flow: 1/5 (Very Poor): The conversation feels broken and illogical, with responses often out of
context. 2/5 (Poor): The conversation has frequent awkward transitions or non-sequiturs that
disrupt the flow. 3/5 (Average): The conversation flows reasonably well, with some disjointed
moments that slightly distract from the overall experience. 4/5 (Good): The conversation flows
well, with only minor issues that do not significantly impact the user's experience. 5/5
(Excellent): The conversation flows seamlessly and logically, feeling completely natural and
coherent throughout.

Overall: 1/5 (Very Poor): The user found the conversation frustrating and unhelpful, strongly
feeling they would not want to use the chatbot again. 2/5 (Poor): The user was somewhat
disappointed with the conversation, finding little value in it and is unlikely to use the
chatbot again soon. 3/5 (Average): The conversation met the user's basic expectations. They
would consider using the chatbot again if needed. 4/5 (Good): The user was pleased with the
conversation and found it helpful, expressing a clear interest in using the chatbot again. 5/5
(Excellent): The user was highly satisfied with the conversation, finding it exceptionally
useful and engaging, and is eager to use the chatbot again.
"""
STUDY = Study(
    name="lufy_human",
    title="LUFY Table 7: subjective evaluation of the released conversations",
    instructions=(
        "Each row is one session of a participant's conversation with one chatbot (hidden behind "
        "a letter; within a participant the same letter is the same chatbot). Rate the sessions "
        "of a participant in chronological order: you may look back at earlier sessions when "
        "rating later ones (LUFY sec. 5.3). Rate each criterion from 1 (lowest) to 5 (highest) "
        "with these rubrics (LUFY App. E, verbatim):\n\n" + RUBRICS
    ),
    criteria=CRITERIA,
)
ICC_ROW = "ICC across annotators"
PAPER_ICC = {"personalization": 0.31, "flow": 0.29, "overall": 0.32}


def units(spec: TableSpec, ctx: TableContext) -> list[Unit]:
    """One unit per (participant, session); each row's system's conversation a candidate."""
    found: dict[tuple[str, int], dict[str, str]] = {}
    for row in spec.need("rows"):
        for episode in load("lufy", ctx.need_data_dir(), system=row_logs(spec, row)):
            user = str(episode.meta.get("user") or episode.speakers[-1])
            for session in episode.sessions:
                text = render_history(session.turns)
                found.setdefault((user, session.index), {})[row.label] = text
    return [
        Unit(f"{user}/s{index}", user, f"Participant {user}, session {index}", texts, index)
        for (user, index), texts in sorted(found.items())
    ]


def _values(ratings: list[Rating], criterion: str, system: str) -> Values:
    """``{participant: {session: [unit score]}}`` of one system (mean over annotators)."""
    out: Values = {}
    for (unit, sys), score in unit_scores(ratings, criterion).items():
        if sys == system:
            user, _, session = unit.rpartition("/s")
            out.setdefault(user, {}).setdefault(int(session), []).append(score)
    return out


def table7(spec: TableSpec, ctx: TableContext) -> BuiltTable:
    """Builder of Table 7 from the imported ratings (module docstring)."""
    path = ratings_path(ctx.results_dir, STUDY)
    ratings = read_ratings(STUDY, path) if path.exists() else []
    cells: list[Cell] = []
    notes: list[str] = []
    rows = [r.label for r in spec.need("rows")]
    for crit in CRITERIA:
        per_row = {row: _values(ratings, crit.key, row) or None for row in rows}
        got, tests = ux_cells(
            replace(spec, options={**(spec.options or {}), "metric": crit.key}), per_row
        )
        cells += [replace(c, column=f"{crit.label} {c.column}", metric=crit.label) for c in got]
        notes += [f"{crit.label}: {t}" for t in tests]
    reference = lufy_reference(spec.id)
    for crit in CRITERIA:
        report = agreement(STUDY, ratings, crit.key) or {}
        ours, n = report.get("icc_a1"), report.get("n_items")
        paper = paper_value(reference, ICC_ROW, "Avg.", crit.key)
        cells.append(Cell(ICC_ROW, f"{crit.label} Avg.", crit.label, ours, paper, n, 2))
    header = {
        "data": f"lufy @ {ctx.data_dir} (the released conversation logs the paper's annotators rated)",
        "agreement": "ICC(2,1) (Shrout & Fleiss; = McGraw & Wong ICC(A,1)) over the "
        "conversations every annotator rated; the paper cites Shrout & Fleiss without the form",
        "judge": (
            f"human: {len({r.annotator for r in ratings})} annotators, ratings {STUDY.name}"
            if ratings
            else "no ratings imported: `recallbench human-eval export lufy_table7`, then "
            "`recallbench human-eval import lufy_table7 <filled sheets>`; until then only the "
            "paper's values are shown"
        ),
    }
    return BuiltTable(cells, header=header, notes=notes)
