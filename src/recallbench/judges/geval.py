"""Pairwise G-Eval judge of retrieved-memory helpfulness (THEANINE App. E.1, Fig. 26).

``GEVAL_TASK`` asks an LLM which of two MEMORY texts better helps the speaker answer the last
utterance of the CURRENT DIALOGUE CONTEXT (``Choice: 1|2|tie``). Offline (``extractive``): the
more helpful memory is the one sharing more content words with the last utterance (then the whole
context), a documented no-LLM stand-in for GPT-4. The head-to-head comparison of two runs that
uses it (THEANINE Fig. 5) is ``recallbench.papers.theanine.head_to_head``.
"""

from __future__ import annotations

import re

from recallbench.llm.shapes import Pattern
from recallbench.llm.task import ParseError, PromptTask
from recallbench.text import answer_content as content
from recallbench.text import answer_words as words
from recallbench.text import light_stem as stem

# THEANINE Fig. 26 "Prompt for G-Eval: Helpfulness of Retrieved Memories", verbatim.
GEVAL_PROMPT = """Your task is to choose a more helpful MEMORY based on the below criterion.

CRITERION:

Helpfulness - A more helpful MEMORY should contain speaker information that is related to CURRENT DIALOGUE CONTEXT, enabling the {speaker} to respond in an appropriate context to the last utterance of the CURRENT DIALOGUE CONTEXT.

The output format should be as follows: Explanation: (a brief explanation) Choice: (answer with "1", "2", or "tie")

Now choose the MEMORY that has better Helpfulness.

CURRENT DIALOGUE CONTEXT: {current_dialogue_context}

MEMORY 1: {memory1}

MEMORY 2: {memory2}

YOUR OUTPUT:"""  # noqa: E501
GEVAL_SOURCE = "THEANINE (Ong et al., NAACL 2025) Fig. 26, verbatim"

_CHOICE = re.compile(r"Choice\s*:\s*[\"'*`(]*\s*(1|2|tie)\b", re.I)


def parse_choice(reply: str) -> str:
    """Parse a Fig. 26 reply: the last ``Choice: 1|2|tie`` -> "1", "2" or "tie"."""
    found = _CHOICE.findall(reply)
    if not found:
        raise ParseError(f"Fig. 26 reply has no 'Choice: 1/2/tie': {reply[-120:]!r}")
    return str(found[-1]).lower()  # re.findall returns list[Any]: one group, a str


def _stems(text: str) -> set[str]:
    return {stem(w) for w in content(words(text))}


def offline_choice(
    last_utterance: str, context: str, memory1: str, memory2: str, **_: object
) -> str:
    """Fig. 26 without an LLM: more content words shared with the last utterance, then context."""
    keys = []
    for memory in (memory1, memory2):
        have = _stems(memory)
        keys.append((len(have & _stems(last_utterance)), len(have & _stems(context))))
    choice = "tie" if keys[0] == keys[1] else ("1" if keys[0] > keys[1] else "2")
    return (
        f"Explanation: offline lexical overlap (last utterance, context): memory 1 {keys[0]}, "
        f"memory 2 {keys[1]}. Choice: {choice}"
    )


GEVAL_TASK: PromptTask[str | None] = PromptTask(
    name="judge.geval_helpfulness",
    template=GEVAL_PROMPT,
    parse=parse_choice,
    offline=offline_choice,
    fallback=None,
    stage="judge",
    max_tokens=256,
    temperature=0.0,
    source=GEVAL_SOURCE,
    reply=Pattern(r"Explanation: [^\n]{1,300} Choice: (1|2|tie)"),  # Fig. 26's output format
)
