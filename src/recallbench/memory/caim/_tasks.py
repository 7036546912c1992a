"""CAIM's prompts (Appendix A, verbatim) and their PromptTasks with offline implementations.

Paper: Westhäußer, Berenguer, Mollenhauer et al., "CAIM: Development and Evaluation of a
Cognitive AI Memory Framework for Long-Term Interaction with Intelligent Agents" (2025).
Appendix A prints eight prompts; they are the constants below, verbatim, with the paper's ``{}``
placeholders named for ``str.format``. The user command goes as the user message after the
prompt (the prompts say "Given a user command" but contain no slot for it). Prompts marked
"ours" cover steps the paper describes (sec. 3.3) without printing a prompt.

Offline implementations (the ``extractive`` backend) follow documented rules, listed on each
function; they return replies in the format the prompts ask for, so the parsers run offline too.
"""

from __future__ import annotations

import json
import re
from datetime import date
from functools import partial
from typing import Any

from recallbench.llm.shapes import Pattern
from recallbench.llm.task import ParseError, PromptTask
from recallbench.memory.caim._dates import resolve_dates
from recallbench.memory.caim._ontology import (
    EXPANSION_CATEGORY,
    EXPANSION_SUBCATEGORY,
    Ontology,
    OntologyDict,
    OntologyError,
    first_terms,
    unknown_topic_words,
    validate,
)
from recallbench.memory.caim._shapes import ThoughtEntry, relevance_reply, render_items
from recallbench.text import DIALOGUE_STOPWORDS as STOPWORDS
from recallbench.text import light_stem as stem
from recallbench.text import words

SOURCE_A = "CAIM (Westhäußer et al. 2025) App. A{}, verbatim"

# --- A.2 Memory Retrieval (sec. 3.3.2 cites "Relevance of Memories" as A.1; it is printed in A.2)
ONTOLOGY_EXPANSION_PROMPT = (
    "Given an ontology and the user input, analyze whether the existing ontology can adequately "
    "categorize and describe the user input with two or three words. If the user input is not "
    "adequately represented by the current ontology, expand the ontology by adding new "
    "categories, subcategories, or tags to properly capture them. Ensure that all new "
    "categories, subcategories, and words consist of only one word and are not already listed "
    "anywhere in the ontology. After making the necessary expansions, only return the updated "
    "ontology in JSON format, without any further information and without including the "
    "markdown marks '```json' and '```'. If no expansion of the ontology is necessary or the "
    "user command lacks context, just return OK, without any further information. The "
    "ontology: {ontology}, The user input: {text}"
)
SELECT_TAGS_PROMPT = (
    "Given a user command and an ontology, select two or three single-word tags from the "
    "ontology, that summarize the main topic or intent of the message the best. The tags should "
    "be relevant and concise, in a comma-separated list, and without explaining the "
    "information. Do not generate new tags, only select and use the single-word tags from the "
    "ontology. Respond following to this format: tag1,tag2,tag3. The ontology: {ontology}"
)
# Verbatim, including the unbalanced quote at the end ("just return ".): the paper's text.
RELEVANCE_PROMPT = (
    "Given a user command and a list of items, determine which items are relevant based on the "
    "user command to respond contextually correctly to the user command, even if it means "
    "contradicting the user's statement, return them without explaining the information. If "
    'none is relevant just return ". The list of items: {items}'
)
# --- A.3 Post Thinking -------------------------------------------------------------------------
KEY_EVENTS_PROMPT = (
    "Analyze the following input and identify key pieces of personal information, interests, "
    "plans, habits, personal details, and recommendations that are important for future "
    "reference. List each detail in its simplest and most specific form. For each extracted "
    "detail, summarize it as a short thought, specifying the context and subject, and make sure "
    "to list separate pieces of information as individual entries. Use the exact timestamp that "
    "is attached. Ignore generic greetings, casual responses, or redundant statements. Return "
    "the output in a comma-separated format without line breaks, strictly following this "
    "structure: key piece;timestamp,key piece;timestamp."
)
# --- ours (sec. 3.3 describes these steps; App. A prints no prompt) ----------------------------
DATES_PROMPT = (
    "Today is {today}. Our past conversations took place on: {sessions}. Determine whether the "
    "user input includes a time-based unit (e.g., 'yesterday', 'June 9th', 'our first "
    "conversation'). If it does, return the calendar dates it refers to as a comma-separated "
    "list in the format YYYY-MM-DD, without any further information. If it does not, just "
    "return NONE."
)
THOUGHT_PROMPT = (
    "Given a key event with its timestamp and an ontology, first select up to three single-word "
    "tags from the ontology that summarize the main content of the key event. Do not generate "
    "new tags. Second, write a concise summary of the key event (the inductive thought). Third, "
    "use the exact timestamp of the key event. Return one line in this format, without any "
    "further information: tag1,tag2,tag3 | inductive thought | timestamp. The ontology: "
    "{ontology}, The key event: {event}, The timestamp: {timestamp}"
)
REVIEW_PROMPT = (
    "Given a numbered list of memories that share the tag '{tag}', identify memories with the "
    "same meaning and merge these duplicate entries into one. Return the updated list, one "
    "memory per line, in this format: [numbers of the memories it replaces] tag1,tag2,tag3 | "
    "inductive thought | timestamp. Keep the memories without duplicates unchanged. Use the "
    "latest timestamp for a merged memory. The memories:\n{memories}"
)
STM_SUMMARY_PROMPT = (
    "Summarize the ongoing conversation below in a few short sentences, keeping every detail "
    "needed to continue it.\n\n{dialogue}"
)
SOURCE_OURS = "ours (CAIM sec. 3.3 describes the step; App. A prints no prompt)"

ISO_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
RECOMMEND = frozenset("recommend recommended suggest suggested try should advise".split())
FILLERS = frozenset("really just actually very so pretty quite totally definitely".split())


# Reply shapes (structured outputs), each the layout its parser reads. The expansion is "OK" or
# a one-line 3-level ontology of single lower-case words (the prompt's rules), bounded to the new
# part (up to 3 categories x 3 subcategories x 5 tags): the method merges the reply into its
# ontology (a union), so the known terms need not be written out again.
_WORD = r'"[a-z]+"'
_TAGS = rf"\[{_WORD}(, ?{_WORD}){{0,4}}\]"
_CATEGORY = rf"{_WORD}: ?\{{{_WORD}: ?{_TAGS}(, ?{_WORD}: ?{_TAGS}){{0,2}}\}}"
EXPANSION_REPLY = Pattern(rf"OK|\{{{_CATEGORY}(, ?{_CATEGORY}){{0,2}}\}}")
DATES_REPLY = Pattern(r"NONE|\d{4}-\d{2}-\d{2}(,\d{4}-\d{2}-\d{2}){0,9}")


def tags_pattern(known: frozenset[str], most: int = 3) -> str:
    """Regex of 1-``most`` comma-separated tags: ontology terms when known, else any words."""
    tag = "(" + "|".join(sorted(known)) + ")" if known else "[a-z]+"  # sorted: a stable key
    return f"{tag}(,{tag}){{0,{most - 1}}}"


def _letters(reply: str) -> str:
    return reply.strip().strip("'\"` ")


# --- ontology and tags ----------------------------------------------------------------------


def parse_expansion(reply: str) -> OntologyDict | None:
    """Parse the expansion reply: OK -> None; else the JSON ontology (fences tolerated).

    A term the reply lists again is dropped there, with what is under it (its first place
    keeps it: ``first_terms``); the paper does not say what becomes of a reply that breaks its
    "no term twice" rule, and rejecting it all lost 4 of 20 SmolLM2 expansions."""
    text = reply.strip().removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    if re.fullmatch(r"\W*ok\W*", text, re.I):
        return None
    try:
        return validate(first_terms(json.loads(text)), "ontology expansion reply")
    except (json.JSONDecodeError, OntologyError) as exc:
        raise ParseError(str(exc)) from None


def offline_expansion(ontology: str, text: str, skip: tuple[str, ...] = (), **_: object) -> str:
    """OK when the input selects 2+ tags lexically (or has no salient word); otherwise the
    ontology with up to two salient unknown words of the input added under misc/mentioned."""
    onto = Ontology(json.loads(ontology))
    names = frozenset(skip)
    if len(onto.matches(text, names)) >= 2:
        return "OK"
    new = unknown_topic_words(onto, text, names)
    if not new:
        return "OK"
    misc = onto.data.get(EXPANSION_CATEGORY, {})
    onto.merge({EXPANSION_CATEGORY: {**misc, EXPANSION_SUBCATEGORY: new}})
    return onto.to_json()


ONTOLOGY_EXPANSION_TASK: PromptTask[dict[str, Any] | None] = PromptTask(
    name="caim.ontology_expansion",
    template=ONTOLOGY_EXPANSION_PROMPT,
    parse=parse_expansion,
    offline=offline_expansion,
    fallback=None,  # an unusable reply leaves the ontology unchanged
    stage="memory",
    max_tokens=4096,
    source=SOURCE_A.format(".2"),
    reply=EXPANSION_REPLY,
)


NO_TAGS = "NONE"  # the offline Select Tags' answer when no ontology term matches


def parse_tags(reply: str, known: frozenset[str] = frozenset()) -> list[str]:
    """Parse ``tag1,tag2,tag3``: lowercased single words; with ``known``, only ontology tags
    (the prompt forbids new tags). ``NONE`` -> no tags (what the offline twin answers when no
    ontology term matches: a decision, not a failed reply). Nothing usable -> ParseError
    (fallback: no tags)."""
    if reply.strip() == NO_TAGS:
        return []
    tags = [t.strip().strip(".'\"").lower() for t in re.split(r"[,\n]", reply)]
    tags = [t for t in dict.fromkeys(tags) if re.fullmatch(r"[^\W\d_]+", t)]
    if known:
        tags = [t for t in tags if t in known]
    if not tags:
        raise ParseError(f"no ontology tag in reply {reply[:60]!r}")
    return tags[:3]


def offline_select_tags(
    ontology: str, command: str, skip: tuple[str, ...] = (), **_: object
) -> str:
    """Lexical Select Tags: ontology terms whose stem occurs in the command (most specific first),
    padded to two with the best match's parents; ``NONE`` when nothing matches."""
    tags = Ontology(json.loads(ontology)).select(command, skip=frozenset(skip))
    return ",".join(tags) or NO_TAGS


def select_tags_task(known: frozenset[str]) -> PromptTask[list[str]]:
    """Select Tags against the current ontology's terms (``known``)."""
    return PromptTask(
        name="caim.select_tags",
        template=(("system", SELECT_TAGS_PROMPT), ("user", "{command}")),
        parse=partial(parse_tags, known=known),
        offline=offline_select_tags,
        fallback=[],
        stage="memory",
        max_tokens=16,
        source=SOURCE_A.format(".2"),
        reply=Pattern(tags_pattern(known)),
    )


# --- dates -------------------------------------------------------------------------------


def parse_dates(reply: str) -> list[str]:
    """Parse ISO dates from the reply; NONE (or nothing) -> []."""
    return sorted(set(ISO_DATE.findall(reply)))


def offline_dates(command: str, today: str, sessions: str, **_: object) -> str:
    """The rule-based resolver ``_dates.resolve_dates`` against the simulated clock."""
    past = [s.strip() for s in sessions.split(",") if ISO_DATE.fullmatch(s.strip())]
    found = resolve_dates(command, date.fromisoformat(today), past)
    return ",".join(d.isoformat() for d in found) or "NONE"


DATES_TASK: PromptTask[list[str]] = PromptTask(
    name="caim.time_reference",
    template=(("system", DATES_PROMPT), ("user", "{command}")),
    parse=parse_dates,
    offline=offline_dates,
    fallback=[],
    stage="memory",
    max_tokens=128,
    source=SOURCE_OURS,
    reply=DATES_REPLY,
)


# --- relevance filter ---------------------------------------------------------------------

_NUMBERED = re.compile(r"^\s*\[?(\d+)[\].):]")
# Words of a memory question that say "recall" rather than what to recall.
GENERIC = frozenset(
    "remember recall remind told tell said say mentioned mention shared share talked talk "
    "spoke discussed conversation know thing things something anything".split()
)


def _norm(text: str) -> str:
    return " ".join(words(text))


def parse_relevance(reply: str, thoughts: tuple[str, ...] = ()) -> list[int]:
    """Map the returned items to 0-based candidate indices (by ``[n]`` or by thought text).

    An empty reply, quotes only or "none" means no item is relevant (the prompt's "return ''").
    A non-empty reply naming no candidate is a ParseError (fallback: keep every candidate).
    """
    text = _letters(reply)
    if not text or text.lower().rstrip(".") in {"none", "nothing", "no items", "''", '""'}:
        return []
    chosen: list[int] = []
    for line in re.split(r"\n|(?=\[\d+\])", text):
        m = _NUMBERED.match(line)
        if m and 1 <= int(m.group(1)) <= len(thoughts):
            chosen.append(int(m.group(1)) - 1)
            continue
        norm = _norm(line)
        chosen += [i for i, t in enumerate(thoughts) if norm and _norm(t) and _norm(t) in norm]
    if not chosen:
        raise ParseError(f"reply names none of the {len(thoughts)} items: {reply[:60]!r}")
    return sorted(set(chosen))


def offline_relevance(
    command: str,
    entries: list[ThoughtEntry],
    dates: list[str],
    skip: tuple[str, ...] = (),
    **_: object,
) -> str:
    """Keep the items dated on a referenced date when the command names dates; otherwise the
    items sharing a content-word stem with the command (names and recall words excluded).
    Returns the kept rows ("" when none)."""
    if dates:
        keep = [e for e in entries if set(e["timestamps"]) & set(dates)]
    else:
        ignore = set(skip) | GENERIC | STOPWORDS
        asked = {stem(w) for w in words(command) if w not in ignore}
        keep = [e for e in entries if asked & {stem(w) for w in words(e["thought"])}]
    return render_items(keep) if keep else ""


def relevance_task(thoughts: tuple[str, ...]) -> PromptTask[list[int] | None]:
    """Relevance of Memories over candidates with these thoughts; fallback None = keep all."""
    return PromptTask(
        name="caim.relevance",
        template=(("system", RELEVANCE_PROMPT), ("user", "{command}")),
        parse=partial(parse_relevance, thoughts=thoughts),
        offline=offline_relevance,
        fallback=None,
        stage="memory",
        max_tokens=512,
        source=SOURCE_A.format(".2"),
        reply=relevance_reply(len(thoughts)),
    )
