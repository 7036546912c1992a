"""What every answer judge returns: a LUFY App. C.1 label with the raw judge output.

Labels (LUFY App. C.1): 1 correct, 0 incorrect, 2 don't-know ("I don't know", "No information
found"). Precision = correct / (correct + incorrect), recall = correct / all questions.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

CORRECT = 1
INCORRECT = 0
DONT_KNOW = 2
LABELS = (CORRECT, INCORRECT, DONT_KNOW)
# what ``describe`` returns: a judge's name and settings, flat (run summaries, table headers)
Description = dict[str, str | int | float | bool | None]


@dataclass(frozen=True)
class Verdict:
    """One judged answer.

    Attributes:
        label: 1 correct, 0 incorrect, 2 don't-know.
        raw: the judge's raw output (an LLM reply, or the lexical judge's label as text).
        parsed: False when ``raw`` was unparseable and ``label`` is the documented fallback.
        failure: why parsing or the call failed (None on success).
        usage: token and cost usage of the judge call (empty for the lexical judge).
        info: judge-specific detail (the lexical judge's matched tokens ...).
    """

    label: int
    raw: str
    parsed: bool = True
    failure: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.label not in LABELS:
            raise ValueError(f"verdict label must be one of {LABELS}, got {self.label!r}")

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (stored in ``Prediction.meta["judge"]``)."""
        return {
            "label": self.label,
            "raw": self.raw,
            "parsed": self.parsed,
            "failure": self.failure,
            "usage": dict(self.usage),
            "info": dict(self.info),
        }


@dataclass(frozen=True)
class JudgeItem:
    """One answer to judge against the label answer of its question."""

    question: str
    label_answer: str
    answer: str


class Judge(ABC):
    """Label answers as correct / incorrect / don't-know."""

    name: str = "judge"

    @abstractmethod
    def judge(self, question: str, label_answer: str, answer: str) -> Verdict:
        """Judge one answer."""

    def judge_many(self, items: Sequence[JudgeItem]) -> list[Verdict]:
        """Judge many answers (LLM judges run them concurrently); order is kept."""
        return [self.judge(i.question, i.label_answer, i.answer) for i in items]

    def describe(self) -> Description:
        """Return what produced the verdicts (for summaries and table headers)."""
        return {"name": self.name}
