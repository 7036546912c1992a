"""Judge ``llm``: the LUFY LLM judges as PromptTasks, on any backend.

- ``QA_JUDGE_TASK``: LUFY App. C.1 (answer correct 1 / incorrect 0 / don't-know 2), verbatim.
  The reply must be exactly one of the tokens ``1``, ``0``, ``2`` (surrounding whitespace,
  quotes, backticks, asterisks and one trailing period are tolerated); anything else ("Output:
  1", "10", "1 - correct") is unparseable and gets the fallback label ``0`` (incorrect: no credit
  for an answer the judge did not accept), counted as a parse failure in the run summary. Its
  offline twin is the ``lexical`` judge rendered as the token an LLM would output, so the
  extractive backend exercises the same parser.
- ``RATING_TASK``: LUFY Fig. 6 (user-experience score 1-5 with a reason), verbatim, for Table 8.
  It has no offline twin: on the extractive backend Table 8 is "n/a", never invented.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from recallbench.errors import ConfigError
from recallbench.judges.base import INCORRECT, LABELS, Description, Judge, JudgeItem, Verdict
from recallbench.judges.lexical import LexicalJudge
from recallbench.llm.protocol import LLMClient
from recallbench.llm.shapes import Choice, Pattern
from recallbench.llm.task import ParseError, PromptTask, TaskResult

# LUFY App. C.1 "Prompt for judging whether the response is correct or not", verbatim (line
# breaks as printed).
QA_JUDGE_PROMPT = """Judge whether the answer to the following question is correct
based on the provided label answer.
Here is the question: {question}
Here is the label answer {label_answer}
Here is the answer that you will be judging: {answer_to_judge}
If the answer to judge is correct, output 1, if it's incorrect, output 0.
If the answer to judge is something like "I don't know" or
"No information found", output 2.
Output 1 even if the answer is only partly correct.
Output 0 if the answer uses "I" as the subject,
because the question is about the user, not the assistant.
Only output 1 or 0 or 2, nothing else, no explanation needed."""
QA_JUDGE_SOURCE = "LUFY (Sumida et al.) App. C.1, verbatim"

# LUFY Fig. 6 "Prompt for estimation of User Experience", verbatim.
RATING_PROMPT = """Based on the following dialogue, evaluate and score how engaging the user({user_name})'s conversation is.

Consider the following factors:

1. the relevance of responses
2. ability to sustain a conversation
3. interest generated through their responses

Here is the conversation script:{conversation_script}

The score should be on a scale from 1 to 5, where 1 is the lowest and 5 is the highest.

Be sure to provide both a score and a brief reason for your rating."""
RATING_SOURCE = "LUFY (Sumida et al.) Fig. 6, verbatim"

_LABEL_STRIP = " \t\r\n`*\"'"


def parse_judge_label(reply: str) -> int:
    """Parse a C.1 judge reply: exactly ``1``, ``0`` or ``2``; raise ParseError otherwise."""
    text = reply.strip(_LABEL_STRIP)
    if text.endswith("."):
        text = text[:-1].strip(_LABEL_STRIP)
    if text in ("0", "1", "2"):
        return int(text)
    raise ParseError(f"C.1 judge reply must be exactly 1, 0 or 2, got {reply[:60]!r}")


_SCORE_PATTERNS = (
    re.compile(r"\bscore\b[*:\s]*(?:is|of|would be|=)?[*:\s]*([0-9](?:\.[0-9]+)?)(?![0-9])", re.I),
    re.compile(r"(?<![0-9.])([0-9](?:\.[0-9]+)?)\s*(?:/\s*5|out of 5)\b", re.I),
    re.compile(r"^[*#\s]*([0-9](?:\.[0-9]+)?)(?:[*\s]|[.:,)](?![0-9])|$)"),
)


def parse_rating(reply: str) -> float:
    """Parse a Fig. 6 reply: the score 1-5 after "score", as "N/5", or as the opening token."""
    for pattern in _SCORE_PATTERNS:
        found = pattern.search(reply.strip())
        if found:
            value = float(found.group(1))
            if 1 <= value <= 5:
                return value
            raise ParseError(f"rating {value} outside 1-5 in {reply[:80]!r}")
    raise ParseError(f"no 1-5 score found in {reply[:80]!r}")


def make_qa_judge_task(
    offline_judge: LexicalJudge | None = None, fallback: int = INCORRECT
) -> PromptTask[int]:
    """Return the C.1 PromptTask; offline it answers with ``offline_judge``'s label token."""
    if fallback not in LABELS:
        raise ConfigError(f"llm judge: fallback must be one of {LABELS}, got {fallback!r}")
    lexical = offline_judge or LexicalJudge()

    def offline(question: str, label_answer: str, answer_to_judge: str, **_: object) -> str:
        return str(lexical.label(question, label_answer, answer_to_judge)[0])

    return PromptTask(
        name="judge.qa",
        template=QA_JUDGE_PROMPT,
        parse=parse_judge_label,
        offline=offline,
        fallback=fallback,
        stage="judge",
        max_tokens=4,
        temperature=0.0,
        source=QA_JUDGE_SOURCE,
        reply=Choice(("1", "0", "2")),
    )


QA_JUDGE_TASK = make_qa_judge_task()
RATING_TASK: PromptTask[float | None] = PromptTask(
    name="judge.ux_rating",
    template=RATING_PROMPT,
    parse=parse_rating,
    offline=None,  # no honest offline twin: Table 8 is n/a without an LLM
    fallback=None,
    stage="judge",
    max_tokens=256,
    temperature=0.0,
    source=RATING_SOURCE,
    reply=Pattern(r"Score: [1-5]\nReason: [^\n]{1,300}"),
)


class LLMJudge(Judge):
    """Judge answers with the LUFY C.1 prompt on ``llm`` (any backend).

    Args:
        llm: a ``recallbench.llm.LLM``; on the extractive backend the verdicts are the lexical
            judge's, passed through the C.1 parser (``describe()`` says so).
        fallback: label used for unparseable replies (default 0, see module docstring).
    """

    name = "llm"

    def __init__(self, llm: LLMClient, fallback: int = INCORRECT) -> None:
        self.llm = llm
        self.fallback = fallback
        self.task = make_qa_judge_task(fallback=fallback)

    def judge(self, question: str, label_answer: str, answer: str) -> Verdict:
        return self.judge_many([JudgeItem(question, label_answer, answer)])[0]

    def judge_many(self, items: Sequence[JudgeItem]) -> list[Verdict]:
        fields = [
            {"question": i.question, "label_answer": i.label_answer, "answer_to_judge": i.answer}
            for i in items
        ]
        results = self.llm.run_many(self.task, fields, progress=False) if fields else []
        return [
            Verdict(
                label=int(r.value),
                raw=r.raw,
                parsed=r.failure is None,
                failure=r.failure,
                usage=r.usage_dict(),
                judge=self.name,
                backend=self.llm.backend.name,
                model=self.llm.model,
                prompt=self.task.source,
            )
            for r in results
        ]

    def rate_many(
        self, items: Sequence[tuple[str, str]], samples: int = 1, temperature: float = 0.0
    ) -> list[list[TaskResult[float | None]]]:
        """Rate conversations ``(user_name, script)`` with Fig. 6; ``samples`` results each.

        Several samples need ``temperature > 0``; sample ``i`` uses seed ``i`` (cacheable).
        A result is a ``TaskResult`` whose ``value`` is the score or None (unparseable).
        """
        if samples > 1 and temperature <= 0:
            raise ConfigError("rating with samples > 1 needs rating_temperature > 0")
        fields = [{"user_name": u, "conversation_script": s} for u, s in items]
        per_sample = []
        for i in range(samples):
            task = dataclasses.replace(RATING_TASK, temperature=temperature, seed=i)
            per_sample.append(self.llm.run_many(task, fields, progress=False))
        return [[per_sample[k][j] for k in range(samples)] for j in range(len(items))]

    def describe(self) -> Description:
        backend = self.llm.backend.name
        out: Description = {"name": self.name, "backend": backend, "model": self.llm.model}
        out["fallback"] = self.fallback
        if backend == "extractive":
            out["note"] = "extractive backend: verdicts are the lexical judge's (C.1 offline twin)"
        return out
