"""CAIM's ``CaimItem`` and the offline ``lexical`` judge; see ``recallbench.judges.caim`` for
the metrics and how this judge decides (its verdicts: ``judges._caim_verdicts``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from recallbench.errors import ConfigError
from recallbench.judges._caim_verdicts import CaimVerdicts, metric_verdict
from recallbench.judges.base import Description
from recallbench.judges.lexical import is_dont_know, match
from recallbench.records import MemoryItem
from recallbench.verdict import JSONValue

CAIM_METRICS = (
    "retrieval_accuracy",
    "response_correctness",
    "contextual_coherence",
    "memory_storage",
)
LEVELS: dict[str, tuple[float, ...]] = {
    "retrieval_accuracy": (0.0, 1.0),
    "response_correctness": (0.0, 0.5, 1.0),
    "contextual_coherence": (0.0, 0.5, 1.0),
    "memory_storage": (0.0, 0.5, 1.0),
}
# Why a metric has no score (``judges._caim_verdicts``: an unavailable verdict).
UNKEYED = "no answer key covers the question"
NOT_APPLICABLE = "not applicable (no relevant memory exists for an unanswerable question)"
NO_LEXICAL_COHERENCE = "coherence offline (no lexical proxy)"


@dataclass(frozen=True)
class CaimItem:
    """One answered probing question with what the judge may see.

    ``answerable`` is None when no answer key covers the question; ``reference`` is the text an
    LLM judge reads (the key's answer and evidence turns, or the user's history without a key).
    """

    question: str
    response: str
    answers: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    answerable: bool | None = None
    evidence: tuple[str, ...] = ()
    reference: str = ""
    recalled: tuple[MemoryItem, ...] = ()
    store: tuple[MemoryItem, ...] = ()


def coverage(item: CaimItem, text: str, fuzzy: float = 0.8) -> float:
    """Return the fraction of the item's targets (keywords, else answer tokens) found in text."""
    if item.keywords:
        found = 0
        for kw in item.keywords:
            m = match("", kw, text, fuzzy)
            found += bool(m.key) and not m.numbers_missing and len(m.matched) == len(m.key)
        return found / len(item.keywords)
    best = 0.0
    for answer in item.answers:
        m = match(item.question, answer, text, fuzzy)
        best = max(best, 0.0 if m.numbers_missing else m.coverage)
    return best


def eligible(memory: MemoryItem, evidence: Sequence[str]) -> bool:
    """Return True when ``memory`` may hold the evidence (provenance overlap, or none known)."""
    return not evidence or not memory.source_ids or bool(set(memory.source_ids) & set(evidence))


def _graded(c: float, threshold: float) -> float:
    return 1.0 if c >= threshold else 0.5 if c > 0 else 0.0


class LexicalCaimJudge:
    """Score the four CAIM metrics from the answer key without any model (module docstring).

    Args:
        threshold: coverage of the targets needed for full credit (1) and for retrieval = 1;
            partial credit (0.5) is any coverage below it.
        fuzzy: difflib ratio at which two words of 5+ letters match (``judges.lexical``).
    """

    name = "lexical"

    def __init__(self, threshold: float = 1.0, fuzzy: float = 0.8) -> None:
        if not 0 < threshold <= 1:
            raise ConfigError(f"caim lexical judge: threshold must be in (0, 1], got {threshold}")
        if not 0 < fuzzy <= 1:
            raise ConfigError(f"caim lexical judge: fuzzy must be in (0, 1], got {fuzzy}")
        self.threshold, self.fuzzy = float(threshold), float(fuzzy)

    def held(self, item: CaimItem, memories: Sequence[MemoryItem]) -> tuple[float, list[str]]:
        """Return the target coverage of the eligible ``memories`` and their ids."""
        chosen = [m for m in memories if eligible(m, item.evidence)]
        text = "\n".join(m.text for m in chosen)
        return (coverage(item, text, self.fuzzy) if chosen else 0.0), [m.item_id for m in chosen]

    def judge(self, item: CaimItem) -> CaimVerdicts:
        """Score one question; all None when no answer key covers it."""
        scores: dict[str, float | None] = dict.fromkeys(CAIM_METRICS)
        if item.answerable is None:
            return self._verdicts(scores, UNKEYED, info={"unkeyed": True})
        declined = is_dont_know(item.response)
        if not item.answerable:
            scores["response_correctness"] = 1.0 if declined else 0.0
            return self._verdicts(scores, NOT_APPLICABLE, info={"declined": declined})
        c_store, store_ids = self.held(item, item.store)
        c_recall, recall_ids = self.held(item, item.recalled)
        c_resp = 0.0 if declined else coverage(item, item.response, self.fuzzy)
        scores.update(
            retrieval_accuracy=1.0 if c_recall >= self.threshold else 0.0,
            response_correctness=_graded(c_resp, self.threshold),
            memory_storage=_graded(c_store, self.threshold),
        )
        info: dict[str, JSONValue] = {
            "coverage": {"store": c_store, "recalled": c_recall, "response": c_resp},
            "eligible_store": len(store_ids),
            "eligible_recalled": [*recall_ids],
            "declined": declined,
        }
        return self._verdicts(scores, "", info, raw=True)

    def _verdicts(
        self,
        scores: dict[str, float | None],
        why: str,
        info: dict[str, JSONValue],
        raw: bool = False,
    ) -> CaimVerdicts:
        """The verdicts of ``scores``; ``why`` a None score is unavailable (coherence: offline)."""
        verdicts = {
            m: metric_verdict(
                m,
                v,
                "caim_lexical",
                NO_LEXICAL_COHERENCE if m == "contextual_coherence" and why != UNKEYED else why,
                raw=str(v) if raw else "",
            )
            for m, v in scores.items()
        }
        return CaimVerdicts(verdicts, info)

    def judge_many(self, items: Sequence[CaimItem]) -> list[CaimVerdicts]:
        return [self.judge(i) for i in items]

    def describe(self) -> Description:
        return {
            "name": self.name,
            "threshold": self.threshold,
            "fuzzy": self.fuzzy,
            "contextual_coherence": "unavailable offline (no lexical proxy)",
        }
