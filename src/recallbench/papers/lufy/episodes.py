"""LUFY Fig. 8 (sec. 6, "Episodic Memory in Conversations"): how many user utterances of a
conversation are episode-related, over the released conversations.

Every user utterance of every conversation (participant x system x session of the LUFY logs
under ``DATA_DIR``) is classified with the App. C.2 prompt (verbatim: Profile-related /
Episode-related / Other) by the generator given to the table command; a conversation's share is
its episode-related utterances over its user utterances. The table gives the distribution of
those shares over the conversations in 10-point bins, as % of conversations (Fig. 8 draws it;
the paper prints only that 36 of 170 conversations, 21.1%, have none) and the other numbers the
paper states: 10.6% of user utterances are episode-related, and some conversations reach 40%. The classification needs an LLM:
with the extractive backend every cell is n/a (never a lexical guess). The paper analysed 170
conversations (which ones is not said); ours are all the logs present.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from recallbench.datasets import load
from recallbench.llm.task import ParseError, PromptTask
from recallbench.papers.lufy.runs import lufy_reference, paper_value, row_logs
from recallbench.tables import BuiltTable, Cell, TableContext, TableSpec

# LUFY App. C.2, verbatim (line breaks as printed).
CATEGORY_PROMPT = (
    "You will be given a single user utterance from a\nhuman-chatbot conversation.\n\n"
    "Classify the utterance into one of the following three categories:\n\n"
    "Profile-related: The user is stating biographical\nfacts, preferences, personal "
    'attributes,\nor other stable information about themselves\n(e.g., "My favorite color '
    'is blue",\n"I have two brothers", "I live in New York").\n\n'
    "Episode-related: The user is referring to a specific\nevent or experience,\nwhether in "
    'the past, present, or future\n(e.g., "I went to a concert last night",\n"I\'m going to '
    'Hong Kong next month",\n"I had a fight with my roommate").\n\n'
    "Other: The utterance does not fall into the above categories. This includes small talk, "
    "greetings, questions, or general opinions not tied to the user's identity or "
    "experiences.\n\n"
    'Please output only the category label:\n"Profile-related", "Episode-related", or '
    '"Other".\n\nHere is the utterance:\n"{user_utterance}"'
)
LABELS = ("Profile-related", "Episode-related", "Other")
_LABEL = re.compile(r"\b(Profile-related|Episode-related|Other)\b", re.IGNORECASE)
BINS = ((0, 0), (0, 10), (10, 20), (20, 30), (30, 40), (40, 100))  # % of user utterances


def parse_category(reply: str) -> str:
    """The one label a reply names (case-insensitive, whole words); two labels or none fail."""
    found = {m.group(1).lower() for m in _LABEL.finditer(reply)}
    if len(found) != 1:
        raise ParseError(f"expected one of {LABELS} in reply {reply[:80]!r}")
    return next(label for label in LABELS if label.lower() in found)


CATEGORY_TASK: PromptTask[str | None] = PromptTask(
    name="lufy.utterance_category",
    template=CATEGORY_PROMPT,
    parse=parse_category,
    fallback=None,  # unparseable: left out of the shares, counted
    stage="judge",
    max_tokens=8,
    source="LUFY App. C.2, verbatim",
)


def bin_label(lo: int, hi: int) -> str:
    return "0%" if hi == 0 else f"({lo}, {hi}]%" if hi < 100 else f"> {lo}%"


def shares(labels: Sequence[Sequence[str | None]]) -> list[float]:
    """Episode-related share (%) of each conversation's classified user utterances."""
    out = []
    for conversation in labels:
        known = [x for x in conversation if x is not None]
        if known:
            out.append(100.0 * sum(x == "Episode-related" for x in known) / len(known))
    return out


def _conversations(spec: TableSpec, ctx: TableContext) -> list[list[str]]:
    out = []
    for row in spec.need("rows"):
        for episode in load("lufy", ctx.need_data_dir(), system=row_logs(spec, row)):
            user = str(episode.meta.get("user") or episode.speakers[-1])
            for session in episode.sessions:
                out.append([t.text for t in session.turns if t.speaker == user and t.text.strip()])
    return out


def episode_table(spec: TableSpec, ctx: TableContext) -> BuiltTable:
    """Builder of Fig. 8: the share distribution and the paper's three numbers."""
    llm = ctx.need("make_llm")()
    offline = llm.backend.offline
    conversations = _conversations(spec, ctx)
    labels: list[list[str | None]] = []
    failed = 0
    if not offline:
        for utterances in conversations:
            results = llm.run_many(CATEGORY_TASK, [{"user_utterance": u} for u in utterances])
            failed += sum(not r.parsed for r in results)
            labels.append([r.value if r.parsed else None for r in results])
    got = shares(labels)
    flat = [x for c in labels for x in c if x is not None]
    reference = lufy_reference(spec.id)
    cells = []
    for lo, hi in BINS:
        label = bin_label(lo, hi)
        inside = sum(s == 0 if hi == 0 else lo < s <= hi for s in got)
        value = 100.0 * inside / len(got) if got else None
        paper = paper_value(reference, "Conversations", label, "percent")
        cells.append(
            Cell("Conversations", label, "% of conversations", value, paper, len(got) or None, 1)
        )
    summary = {
        "episode-related utterances (%)": (
            100.0 * flat.count("Episode-related") / len(flat) if flat else None
        ),
        "largest share (%)": max(got) if got else None,
    }
    for column, value in summary.items():
        paper = paper_value(reference, "Summary", column, "percent")
        cells.append(
            Cell(
                "Summary",
                column,
                "%",
                value,
                paper,
                len(flat if "utter" in column else got) or None,
                1,
            )
        )
    header = {
        "data": f"lufy @ {ctx.data_dir}: {len(conversations)} conversations",
        "generator": "unavailable offline (extractive backend): n/a"
        if offline
        else f"{llm.backend.name}:{llm.model} with the App. C.2 prompt",
    }
    notes = [f"{failed} unparseable replies left out"] if failed else []
    return BuiltTable(cells, header=header, notes=notes)
