"""LoCoMo's answering prompts as PromptTasks, the category-5 options and when a question is asked.

The prompts are the authors' (``task_eval/evaluate_gpts.py`` of snap-research/locomo, RAG mode:
the retrieved context, a blank line, ``QA_PROMPT``; ``QA_PROMPT_CAT_5`` for the two-option
adversarial question). The offline twins are ours (see ``_protocol``'s Deviations).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from recallbench.llm.task import PromptTask
from recallbench.protocols.qa import offline_answer
from recallbench.records import QAItem
from recallbench.text import answer_content, answer_words

# snap-research/locomo task_eval/evaluate_gpts.py, unchanged (``{}`` named ``{question}``).
QA_PROMPT = """
Based on the above context, write an answer in the form of a short phrase for the following question. Answer with exact words from the context whenever possible.

Question: {question} Short answer:
"""  # noqa: E501
QA_PROMPT_CAT_5 = """
Based on the above context, answer the following question.

Question: {question} Short answer:
"""
TEMPORAL_SUFFIX = " Use DATE of CONVERSATION to answer with an approximate date."
CHOICE = " Select the correct answer: (a) {} (b) {}. "
NOT_MENTIONED = "Not mentioned in the conversation"
SOURCE = (
    "LoCoMo: copied unchanged from the authors' code, snap-research/locomo "
    "task_eval/evaluate_gpts.py (RAG mode: context, blank line, QA prompt)"
)


def _offline_answer(question: str, items: Sequence[str] = (), **fields: Any) -> str:
    best = offline_answer(question, items, fields.get("names", ()))
    return NOT_MENTIONED if best == "I don't know." else best


def _offline_choice(question: str, items: Sequence[str] = (), **fields: Any) -> str:
    best = offline_answer(question, items, fields.get("names", ()))
    bait = set(answer_content(answer_words(fields["bait"])))
    found = bait and bait <= set(answer_content(answer_words(best)))
    return (
        "(b)"
        if (found and fields["bait_is"] == "b") or (not found and fields["bait_is"] == "a")
        else "(a)"
    )


ANSWER_TASK: PromptTask[str] = PromptTask(
    name="locomo.answer",
    template="{memory}\n\n" + QA_PROMPT,
    offline=_offline_answer,
    fallback="",
    stage="answer",
    max_tokens=32,
    temperature=0.0,
    source=SOURCE,
)
ADVERSARIAL_TASK: PromptTask[str] = PromptTask(
    name="locomo.answer_adversarial",
    template="{memory}\n\n" + QA_PROMPT_CAT_5,
    offline=_offline_choice,
    fallback="",
    stage="answer",
    max_tokens=32,
    temperature=0.0,
    source=SOURCE,
)


def choice_answer(reply: str, options: Mapping[str, str]) -> str:
    """LoCoMo's ``get_cat_5_answer``: a one-letter or "(x)" reply becomes that option's text."""
    low = reply.strip().lower()
    if len(low) == 1:
        return options["a"] if "a" in low else options["b"]
    if len(low) == 3:
        return options["a"] if "(a)" in low else options["b"]
    return low


def options_for(qa: QAItem) -> dict[str, str]:
    """The two options of a category-5 question, in the order drawn for it (seeded by its id)."""
    bait = str(qa.meta.get("adversarial_answer", ""))
    if random.Random(qa.qa_id).random() < 0.5:
        return {"a": NOT_MENTIONED, "b": bait}
    return {"a": bait, "b": NOT_MENTIONED}


def ask_session(qa: QAItem, mode: str, last: int) -> int:
    """The session after which ``qa`` is asked (``ask_after``: last | evidence)."""
    if mode == "last" or not qa.evidence:
        return last
    sessions = [int(e.rsplit("/D", 1)[1].split(":")[0]) for e in qa.evidence]
    return max(max(sessions), 1)
