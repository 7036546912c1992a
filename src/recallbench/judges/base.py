"""What every answer judge returns: a ``recallbench.verdict.Verdict`` (the one verdict shape
of every protocol and judge), a LUFY App. C.1 label with the raw judge output.

Labels (LUFY App. C.1): 1 correct, 0 incorrect, 2 don't-know ("I don't know", "No information
found"). Precision = correct / (correct + incorrect), recall = correct / all questions.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from recallbench.verdict import CORRECT, DONT_KNOW, INCORRECT, LABELS, Verdict

# what ``describe`` returns: a judge's name and settings, flat (run summaries, table headers)
Description = dict[str, str | int | float | bool | None]

__all__ = ["CORRECT", "DONT_KNOW", "INCORRECT", "LABELS", "Judge", "JudgeItem", "Verdict"]


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
