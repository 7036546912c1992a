"""LongMemEval's reading prompts as PromptTasks (the authors' ``src/generation/run_generation.py``).

``READ_PROMPT`` (direct answer) and ``READ_PROMPT_COT`` (the "step by step" reading; the
authors' README calls this reading ``con``: "instructs the model to first extract useful
information and then reason over it", and recommends it) are ``prepare_prompt``'s templates for
retrieved history without key expansion, word for word, their positional ``{}`` named ``memory`` (the history
chats), ``date`` (the question's date, as the release writes it) and ``question``. ``CON_PROMPT``
is the Chain-of-Note note prompt (one reading note per retrieved chunk, ``temperature`` 0,
``max_tokens`` 500 there), its fields named ``session_date``, ``content``, ``date``, ``question``.

Offline twins (ours, no LLM): the reader is the recalled item sharing most content words with
the question (``protocols.qa.offline_answer``: "I don't know." when none does); a note is the
chunk itself when it shares a content word with the question, else "empty" (the word the CoN
prompt asks for).
"""

from __future__ import annotations

from collections.abc import Sequence

from recallbench.llm.task import PromptTask
from recallbench.protocols.qa import offline_answer
from recallbench.text import content_stems

# xiaowu0162/LongMemEval src/generation/run_generation.py prepare_prompt (MIT), unchanged but
# for the named fields.
READ_PROMPT = "I will give you several history chats between you and a user. Please answer the question based on the relevant chat history.\n\n\nHistory Chats:\n\n{memory}\n\nCurrent Date: {date}\nQuestion: {question}\nAnswer:"  # noqa: E501
READ_PROMPT_COT = "I will give you several history chats between you and a user. Please answer the question based on the relevant chat history. Answer the question step by step: first extract all the relevant information, and then reason over the information to get the answer.\n\n\nHistory Chats:\n\n{memory}\n\nCurrent Date: {date}\nQuestion: {question}\nAnswer (step by step):"  # noqa: E501
CON_PROMPT = 'I will give you a chat history between you and a user, as well as a question from the user. Write reading notes to extract all the relevant user information relevant to answering the answer. If no relevant information is found, just output "empty". \n\n\nChat History:\nSession Date: {session_date}\nSession Content:\n{content}\n\nQuestion Date: {date}\nQuestion: {question}\nExtracted note (information relevant to answering the question):'  # noqa: E501
SESSION_BLOCK = "\n### Session {}:\nSession Date: {}\nSession Content:\n{}\n"  # run_generation.py
SOURCE = (
    "LongMemEval (Wu et al., ICLR 2025): copied unchanged from the authors' code, "
    "xiaowu0162/LongMemEval src/generation/run_generation.py prepare_prompt (MIT)"
)
# reading -> (answer template, separate notes first): the README's direct | con | con-separate
READINGS = {
    "direct": (READ_PROMPT, False),
    "con": (READ_PROMPT_COT, False),
    "con_separate": (READ_PROMPT_COT, True),
}


def _offline_read(question: str, items: Sequence[str] = (), **fields: object) -> str:
    names = fields.get("names", ())
    return offline_answer(question, items, names if isinstance(names, (list, tuple)) else ())


def _offline_note(content: str, question: str, **_: object) -> str:
    return content if content_stems(question) & content_stems(content) else "empty"


def read_task(
    reading: str, max_tokens: int, temperature: float, seed: int | None
) -> PromptTask[str]:
    """The reader's task for ``reading`` (direct | con | con_separate)."""
    return PromptTask(
        name=f"longmemeval.read_{reading}",
        template=READINGS[reading][0],
        offline=_offline_read,
        fallback="",
        stage="answer",
        max_tokens=max_tokens,
        temperature=temperature,
        seed=seed,
        source=SOURCE,
    )


CON_TASK: PromptTask[str] = PromptTask(
    name="longmemeval.chain_of_note",
    template=CON_PROMPT,
    offline=_offline_note,
    fallback="empty",
    stage="answer",
    max_tokens=500,
    temperature=0.0,
    source=SOURCE,
)
