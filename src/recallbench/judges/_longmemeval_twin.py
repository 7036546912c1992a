"""The offline twin of the LongMemEval judge (``judges.longmemeval``): no LLM, deterministic.

NOT the paper's judge (gpt-4o-2024-08-06): a stand-in that lets the extractive backend run the
judge's PromptTasks through the same parser. Rules, per template (``judges.longmemeval.branch``):

- ``abstention``: "yes" when the response declines (``judges.lexical.is_dont_know``) or says
  the information is missing anywhere in it (``UNANSWERABLE_CUES``);
- otherwise the ``lexical`` judge's match of the key (the rubric, for preference questions) in
  the response: enough of its key words (``threshold``) and every number. A key of the form
  "7 days. 8 days (including the last day) is also acceptable." accepts each of its answers
  (``alternatives``). For ``temporal``, a number of the key missing from the response counts as
  said when the response has that number plus or minus one (the prompt's off-by-one days).

A free-form personalised reply rarely covers a preference rubric's words: the twin is weak there.
"""

from __future__ import annotations

import re

from recallbench.judges.lexical import LexicalJudge, is_dont_know, match
from recallbench.text import answer_words, is_number

# Phrases anywhere in a response that say the asked information is missing (offline twin only).
UNANSWERABLE_CUES = (
    "not mentioned",
    "did not mention",
    "didn't mention",
    "never mentioned",
    "no information",
    "not enough information",
    "information provided is not enough",
    "don't have information",
    "don't have any information",
    "do not have any information",
    "no record",
    "cannot answer",
    "can't answer",
    "unanswerable",
    "not specified",
)


def _near(number: str, present: set[str]) -> bool:
    """Whether ``present`` holds ``number`` plus or minus one (integers only)."""
    try:
        n = float(number)
    except ValueError:
        return False
    return any(is_number(p) and abs(float(p) - n) <= 1 for p in present)


def offline_reply(
    question: str,
    answer: str,
    response: str,
    branch_name: str,
    lexical: LexicalJudge | None = None,
) -> str:
    """The offline twin's reply, "yes" or "no" (module docstring: the rule per branch)."""
    if branch_name == "abstention":
        text = " ".join(response.lower().replace("\u2019", "'").split())
        return (
            "yes" if is_dont_know(response) or any(c in text for c in UNANSWERABLE_CUES) else "no"
        )
    lexical = lexical or LexicalJudge()
    for key in alternatives(answer):
        said = response
        if branch_name == "temporal":  # a key number off by one counts as said
            present = set(answer_words(response))
            near = [n for n in answer_words(key) if is_number(n) and n not in present]
            said = " ".join([response, *(n for n in near if _near(n, present))])
        m = match(question, key, said, lexical.fuzzy)
        if m.key and m.coverage >= lexical.threshold and not m.numbers_missing:
            return "yes"
    return "no"


_ACCEPTABLE = re.compile(r"\s*(?:\([^)]*\))?\s*is also acceptable\.?\s*$", re.I)


def alternatives(answer: str) -> list[str]:
    """The answers a key accepts: "7 days. 8 days (including the last day) is also acceptable."
    accepts "7 days" and "8 days"; any other key is one answer (offline twin only)."""
    if "also acceptable" not in answer.lower():
        return [answer]
    parts = [p.strip() for p in re.split(r"(?<=\.)\s+", answer.strip()) if p.strip()]
    out = [_ACCEPTABLE.sub("", p).strip().rstrip(".") for p in parts]
    return [a for a in out if a] or [answer]
