"""Judge ``mem0_j``: the LLM-as-a-judge score J of the Mem0 paper (Chhikara et al. 2025, sec. 4).

Prompt: ``ACCURACY_PROMPT`` of Mem0's evaluation (``mem0ai/mem0`` ``evaluation/metrics/
llm_judge.py``), verbatim (its typographic quotes and trailing spaces included), sent as one user
message with ``response_format=json_object`` and temperature 0 in the original; here the reply
shape is a JSON object ``{"label": "CORRECT" | "WRONG"}`` (``llm.shapes.JsonReply``), so a
structured-output backend constrains it and any other backend is parsed. J = share of CORRECT.
The original reads ``json.loads(extract_json(reply))["label"]`` and crashes on anything else;
here an unparseable reply gets the fallback label (0, WRONG) and is counted as a parse failure.

Offline twin (extractive backend): the ``lexical`` judge's verdict written as the JSON an LLM
would return (correct -> CORRECT, incorrect or don't-know -> WRONG), so the parser runs offline;
``describe()`` says so. It is a no-LLM stand-in, never Mem0's GPT-4o-mini judge.

Labels map to the house's verdicts: CORRECT -> 1, WRONG -> 0 (J has no don't-know).
"""

from __future__ import annotations

import json
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict

from recallbench.judges.base import CORRECT, INCORRECT, Description
from recallbench.judges.lexical import LexicalJudge
from recallbench.judges.llm import LLMJudge
from recallbench.llm.protocol import LLMClient
from recallbench.llm.shapes import JsonReply
from recallbench.llm.task import ParseError, PromptTask

# mem0ai/mem0 evaluation/metrics/llm_judge.py ACCURACY_PROMPT, unchanged.
ACCURACY_PROMPT = """
Your task is to label an answer to a question as \u2019CORRECT\u2019 or \u2019WRONG\u2019. You will be given the following data:
    (1) a question (posed by one user to another user), 
    (2) a \u2019gold\u2019 (ground truth) answer, 
    (3) a generated answer
which you will score as CORRECT/WRONG.

The point of the question is to ask about something one user should know about the other user based on their prior conversations.
The gold answer will usually be a concise and short answer that includes the referenced topic, for example:
Question: Do you remember what I got the last time I went to Hawaii?
Gold answer: A shell necklace
The generated answer might be much longer, but you should be generous with your grading - as long as it touches on the same topic as the gold answer, it should be counted as CORRECT. 

For time related questions, the gold answer will be a specific date, month, year, etc. The generated answer might be much longer or use relative time references (like "last Tuesday" or "next month"), but you should be generous with your grading - as long as it refers to the same date or time period as the gold answer, it should be counted as CORRECT. Even if the format differs (e.g., "May 7th" vs "7 May"), consider it CORRECT if it's the same date.

Now it's time for the real question:
Question: {question}
Gold answer: {label_answer}
Generated answer: {answer_to_judge}

First, provide a short (one sentence) explanation of your reasoning, then finish with CORRECT or WRONG. 
Do NOT include both CORRECT and WRONG in your response, or it will break the evaluation script.

Just return the label CORRECT or WRONG in a json format with the key as "label".
"""  # noqa: E501, W291
ACCURACY_SOURCE = (
    "Mem0 (Chhikara et al. 2025): copied unchanged from the authors' code, mem0ai/mem0 "
    "evaluation/metrics/llm_judge.py"
)


class JLabel(BaseModel):
    """The reply Mem0's judge asks for: ``{"label": "CORRECT" | "WRONG"}``."""

    model_config = ConfigDict(extra="forbid")
    label: Literal["CORRECT", "WRONG"]


_OBJECT = re.compile(r"\{.*\}", re.S)


def parse_j_label(reply: str) -> int:
    """Parse a J reply: the JSON object's ``label`` (CORRECT -> 1, WRONG -> 0)."""
    found = _OBJECT.search(reply)
    if found is None:
        raise ParseError(f"J judge reply holds no JSON object: {reply[:80]!r}")
    try:
        label = json.loads(found.group(0)).get("label")
    except (json.JSONDecodeError, AttributeError) as exc:
        raise ParseError(f"J judge reply is not a JSON object: {reply[:80]!r}") from exc
    if label == "CORRECT":
        return CORRECT
    if label == "WRONG":
        return INCORRECT
    raise ParseError(f"J judge label must be CORRECT or WRONG, got {label!r}")


def make_j_task(offline_judge: LexicalJudge | None = None) -> PromptTask[int]:
    """Return the J PromptTask; offline it answers with the lexical judge's verdict as JSON."""
    lexical = offline_judge or LexicalJudge()

    def offline(question: str, label_answer: str, answer_to_judge: str, **_: object) -> str:
        label = lexical.label(question, label_answer, answer_to_judge)[0]
        return json.dumps({"label": "CORRECT" if label == CORRECT else "WRONG"})

    return PromptTask(
        name="judge.mem0_j",
        template=ACCURACY_PROMPT,
        parse=parse_j_label,
        offline=offline,
        fallback=INCORRECT,
        stage="judge",
        max_tokens=64,
        temperature=0.0,
        source=ACCURACY_SOURCE,
        reply=JsonReply(JLabel),
    )


J_TASK = make_j_task()


class Mem0JJudge(LLMJudge):
    """Label answers CORRECT / WRONG with Mem0's judge prompt on ``llm`` (any backend).

    The LUFY judge's machinery (``LLMJudge``: concurrent calls, verdicts with raw text, usage and
    failures) with Mem0's task; its fields are the house's judge fields (question, label answer,
    answer to judge) in the places of Mem0's ``{gold_answer}``/``{generated_answer}``.
    """

    name = "mem0_j"

    def __init__(self, llm: LLMClient) -> None:
        self.llm = llm
        self.fallback = INCORRECT
        self.task = J_TASK

    def describe(self) -> Description:
        backend = self.llm.backend.name
        out: Description = {"name": self.name, "backend": backend, "model": self.llm.model}
        if backend == "extractive":
            out["note"] = "extractive backend: verdicts are the lexical judge's (J's offline twin)"
        return out
