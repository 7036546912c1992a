"""The LLM extractor: an alternative candidate generator for the writing gate (sec. 3.2 names
"a prompt-based extractor" as one option). Its candidates pass the same confidence gate as the
rule writer's, with the model's own confidence as the pattern reliability.

The prompt is this project's (the paper prints none for extraction). The ``extractive`` backend
answers it with the rule writer's candidates (``offline``), so offline the two writers agree and
a comparison needs an LLM.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from recallbench.llm.shapes import JsonReply
from recallbench.llm.task import ParseError, PromptTask
from recallbench.memory.timerag._writer import Candidate, candidates, canonical

EXTRACT_PROMPT = (
    (
        "system",
        "You extract long-term facts a user states about themself: preferences (likes and "
        "dislikes, constraints), background (occupation, location, family, pets), prohibitions "
        "and long-term goals. Ignore small talk, questions and facts about other people.",
    ),
    (
        "user",
        "Utterance by {speaker}:\n{utterance}\n\nAnswer with a JSON list, one object per fact: "
        '{{"slot_type": "preference.<topic>|background.<kind>|constraint|goal", "value": '
        '"<short canonical phrase>", "polarity": "+" or "-", "confidence": <0..1>}}. '
        "Answer [] when there is none.",
    ),
)


class _Fact(BaseModel):
    model_config = ConfigDict(extra="forbid")
    slot_type: str = Field(max_length=60)
    value: str = Field(max_length=120)
    polarity: Literal["+", "-"]
    confidence: float = Field(ge=0, le=1)


class FactList(BaseModel):
    """The extraction reply as a JSON object (strict mode wants an object, not a list)."""

    model_config = ConfigDict(extra="forbid")
    facts: list[_Fact] = Field(max_length=8)


# The reply shape (structured outputs), rendered back to the list the prompt asks for.
EXTRACT_REPLY = JsonReply(FactList, render=lambda obj: json.dumps(obj["facts"]))


def parse_extraction(reply: str) -> list[Candidate]:
    """Parse the JSON list; objects without a slot type or value are dropped."""
    start, end = reply.find("["), reply.rfind("]")
    if start < 0 or end < start:
        raise ParseError(f"no JSON list in reply {reply[:80]!r}")
    try:
        rows = json.loads(reply[start : end + 1])
    except json.JSONDecodeError as exc:
        raise ParseError(f"not JSON: {exc.msg}") from None
    out = []
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict):
            continue
        slot, value = (
            str(row.get("slot_type") or "").strip(),
            canonical(str(row.get("value") or "")),
        )
        if not slot or not value:
            continue
        polarity = "-" if str(row.get("polarity", "+")).strip() == "-" else "+"
        try:
            confidence = min(1.0, max(0.0, float(row.get("confidence", 0.7))))
        except (TypeError, ValueError):
            confidence = 0.7
        out.append(Candidate(slot, value, polarity, confidence, "llm"))
    return out


def offline_extraction(speaker: str, utterance: str) -> str:
    """The rule writer's candidates as the JSON the prompt asks for."""
    rows = [
        {
            "slot_type": c.slot_type,
            "value": c.value,
            "polarity": c.polarity,
            "confidence": c.reliability,
        }
        for c in candidates(utterance)
    ]
    return json.dumps(rows)


EXTRACT_TASK: PromptTask[list[Candidate]] = PromptTask(
    name="timerag.extract",
    template=EXTRACT_PROMPT,
    parse=parse_extraction,
    offline=offline_extraction,
    fallback=[],  # an unusable reply writes nothing
    stage="memory",
    max_tokens=256,
    source="recallbench (TimeRAG-Memory prints no extraction prompt)",
    reply=EXTRACT_REPLY,
)
