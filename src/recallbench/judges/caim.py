"""CAIM's four per-question metrics (Westhäußer et al. 2025, ``papers/caim.md`` sec. 4.1.3).

- ``retrieval_accuracy`` (0 / 1): were the relevant memories retrieved;
- ``response_correctness`` (0 / 0.5 / 1): does the response contain the correct answer;
- ``contextual_coherence`` (0 / 0.5 / 1): is the response naturally and coherently structured;
- ``memory_storage`` (0 / 0.5 / 1): is the relevant information stored in the LTM.

The paper's raters were three humans; here a judge stands in (labelled as such in every table).

Judge ``lexical`` (offline, needs the answer key: ``gvd`` option ``answer_key``):

- Targets: the key's ``keywords``; a keyword is found in a text when every key token of it is
  (``judges.lexical.match``: stems, joined compounds, fuzzy typos, numbers). Without keywords,
  the answers' key tokens (``match`` against the question), the best answer alternative.
  Coverage c = fraction of targets found.
- "A memory holds the evidence" (derived memories such as summaries and thoughts included): an
  item is *eligible* when its provenance ``source_ids`` share a turn with the key's evidence
  turns, or it has no provenance at all (an abstractive profile or a merged thought whose
  sources are unknown); an eligible item must then also cover the targets by content. Provenance
  alone is not enough (an abstractive day summary names every turn of its day), content alone is
  not enough (a keyword said on another day is not the evidence). Without evidence turns in the
  key every item is eligible.
- ``memory_storage``: c over the eligible items of the store at question time, 1 when c >=
  ``threshold``, 0.5 when 0 < c < ``threshold``, else 0. ``retrieval_accuracy``: 1 when c over the
  eligible recalled items >= ``threshold``, else 0. ``response_correctness``: c over the response
  (0 when it declines). Questions with ``answerable: false`` get correctness 1 when the response
  declines ("I don't know" ...), else 0; retrieval and storage are not applicable (None).
- ``contextual_coherence``: unavailable offline (None). No lexical proxy measures whether a
  reply is naturally structured; an LLM judge is needed.

Judge ``llm``: one rubric PromptTask per metric, written by us from the sec. 4.1.3 definitions
(the paper prints no judge prompt; its raters were humans). The reply must be exactly one of the
metric's labels (``0``/``1``, or ``0``/``0.5``/``1``; quotes, asterisks and one trailing period
tolerated); anything else is a parse failure with fallback 0. Offline (extractive backend) the
retrieval / correctness / storage tasks answer with the lexical judge's label, so the parser is
exercised; coherence has no offline twin and is None there.

Verdicts (``judges._caim_verdicts``, issue 47): each metric of a question is one
``recallbench.verdict.Verdict`` (score = the metric's value; None, with the reason in
``failure``, when unavailable or not applicable); ``CaimVerdicts`` groups a question's four and
is what ``qa_gvd`` stores in ``Prediction.meta["caim"]``; ``caim_verdicts(prediction)`` reads it
(and the older ``{scores, raw, failures, info}`` shape).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from recallbench.judges._caim_lexical import (
    CAIM_METRICS,
    LEVELS,
    CaimItem,
    LexicalCaimJudge,
    coverage,
    eligible,
)
from recallbench.judges._caim_llm import (
    COHERENCE_PROMPT,
    CORRECTNESS_PROMPT,
    NO_MEMORY,
    RETRIEVAL_PROMPT,
    RUBRIC_SOURCE,
    STORAGE_PROMPT,
    LLMCaimJudge,
    parse_level,
    render_memories,
    rubric_task,
)
from recallbench.judges._caim_verdicts import CaimVerdicts, caim_verdicts, metric_verdict
from recallbench.judges.base import Description

__all__ = [
    "CAIM_METRICS",
    "COHERENCE_PROMPT",
    "CaimJudge",
    "CORRECTNESS_PROMPT",
    "LEVELS",
    "NO_MEMORY",
    "RETRIEVAL_PROMPT",
    "RUBRIC_SOURCE",
    "STORAGE_PROMPT",
    "CaimItem",
    "CaimVerdicts",
    "LLMCaimJudge",
    "LexicalCaimJudge",
    "caim_verdicts",
    "coverage",
    "eligible",
    "metric_verdict",
    "parse_level",
    "render_memories",
    "rubric_task",
]


class CaimJudge(Protocol):
    """What protocols use of a CAIM judge (``LexicalCaimJudge``, ``LLMCaimJudge``)."""

    def judge_many(self, items: Sequence[CaimItem]) -> list[CaimVerdicts]:
        """Return one verdict per item, in order."""
        ...

    def describe(self) -> Description:
        """Return what the verdicts came from (for summaries and table headers)."""
        ...
