"""CAIM's ``llm`` judge: one rubric PromptTask per metric and their prompts; see
``recallbench.judges.caim`` for the metrics and the parsing rules.
"""

from __future__ import annotations

from collections.abc import Sequence

from recallbench.errors import did_you_mean
from recallbench.judges._caim_lexical import (
    CAIM_METRICS,
    LEVELS,
    NOT_APPLICABLE,
    CaimItem,
    LexicalCaimJudge,
)
from recallbench.judges._caim_verdicts import CaimVerdicts, metric_verdict
from recallbench.judges.base import Description
from recallbench.llm.protocol import LLMClient
from recallbench.llm.shapes import Choice
from recallbench.llm.task import ParseError, PromptTask, TaskResult
from recallbench.records import MemoryItem

_COMMON = (
    "You are an expert annotator evaluating a chatbot with long-term memory on a probing "
    "question about earlier conversations with the user.\n\n"
    "Question: {question}\n"
    "Reference (what the correct answer is based on): {reference}\n"
)
# Ours, from CAIM sec. 4.1.3 (the metric definitions and label sets, quoted in the first line of
# each rubric); the paper's raters were humans and it prints no judge prompt.
RETRIEVAL_PROMPT = (
    _COMMON + "Memories retrieved for the question:\n{retrieved}\n\n"
    "Retrieval Accuracy evaluates whether the relevant memories are successfully retrieved "
    "(labels: 0 = no; 1 = yes).\n"
    "Output 1 if the retrieved memories contain the information needed to answer the question "
    "correctly, otherwise 0. Only output 0 or 1, nothing else."
)
CORRECTNESS_PROMPT = (
    _COMMON + "Response: {response}\n\n"
    "Response Correctness evaluates whether the response contains the correct answer to the "
    "question (labels: 0 = wrong; 0.5 = partial; 1 = correct).\n"
    "Output 1 if the response contains the correct answer, 0.5 if it is partly correct, 0 if it "
    "is wrong or gives no answer. If the reference says the question cannot be answered from the "
    "conversations, output 1 if the response declines or corrects the premise, else 0. "
    "Only output 0, 0.5 or 1, nothing else."
)
COHERENCE_PROMPT = (
    "You are an expert annotator evaluating a chatbot with long-term memory.\n\n"
    "The user asked: {question}\n"
    "The chatbot replied: {response}\n\n"
    "Contextual Coherence evaluates whether the response is naturally and coherently structured "
    "(labels: 0 = not coherent; 0.5 = partially coherent; 1 = coherent).\n"
    "Judge only how natural, fluent and coherent the reply is in this conversation, not whether "
    "it is factually correct. Only output 0, 0.5 or 1, nothing else."
)
STORAGE_PROMPT = (
    _COMMON + "Everything stored in the chatbot's long-term memory:\n{store}\n\n"
    "Memory Storage evaluates whether the relevant information is stored inside the long-term "
    "memory (labels: 0 = not stored; 0.5 = partially stored; 1 = stored).\n"
    "Output 1 if the stored memories contain all the information needed to answer the question, "
    "0.5 if they contain part of it, 0 if none. Only output 0, 0.5 or 1, nothing else."
)
RUBRIC_SOURCE = "ours, from CAIM (Westhäußer et al. 2025) sec. 4.1.3 metric definitions"
NO_MEMORY = "(none)"
NO_OFFLINE_TWIN = "no offline twin on an offline backend (coherence)"
NOT_ASKED = "not asked of this judge (its metrics option)"


def parse_level(reply: str, levels: Sequence[float]) -> float:
    """Parse a rubric reply that must be exactly one of ``levels`` (``1``, ``0.5``, ``0``)."""
    text = reply.strip(" \t\r\n`*\"'")
    if text.endswith(".") and text[:-1].strip():
        text = text[:-1].strip(" \t\r\n`*\"'")
    allowed = {_token(v): v for v in levels}
    allowed.update({f"{v:.1f}": v for v in levels})
    if text in allowed:
        return allowed[text]
    raise ParseError(f"reply must be exactly one of {sorted(allowed)}, got {reply[:60]!r}")


def _token(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else str(v)


_TEMPLATES = {
    "retrieval_accuracy": RETRIEVAL_PROMPT,
    "response_correctness": CORRECTNESS_PROMPT,
    "contextual_coherence": COHERENCE_PROMPT,
    "memory_storage": STORAGE_PROMPT,
}


def rubric_task(metric: str, offline_judge: LexicalCaimJudge | None = None) -> PromptTask[float]:
    """Return the rubric PromptTask of ``metric``; offline it answers with the lexical label."""
    levels = LEVELS[metric]
    lexical = offline_judge or LexicalCaimJudge()
    offline = None
    if metric != "contextual_coherence":

        def offline(_item: CaimItem, **_: object) -> str:
            value = lexical.judge(_item).scores[metric]
            return _token(0.0 if value is None else value)

    return PromptTask(
        name=f"judge.caim.{metric}",
        template=_TEMPLATES[metric],
        parse=lambda reply: parse_level(reply, levels),
        offline=offline,
        fallback=0.0,
        stage="judge",
        max_tokens=4,
        temperature=0.0,
        source=RUBRIC_SOURCE,
        reply=Choice(tuple(_token(v) for v in levels)),
    )


def render_memories(items: Sequence[MemoryItem]) -> str:
    """Render memories one per line with their date (what the LLM judge reads)."""
    if not items:
        return NO_MEMORY
    return "\n".join(
        f"- [{m.created.date().isoformat() if m.created else 'undated'}] {m.text}" for m in items
    )


class LLMCaimJudge:
    """Score the four CAIM metrics with the rubric prompts on ``llm`` (any backend).

    Args:
        llm: a ``recallbench.llm.LLM``.
        seed: decoding seed (raters "one model with different seeds" for agreement studies).
        temperature: decoding temperature (> 0 makes seeds differ).
        metrics: which metrics to ask for (default all four).
    """

    name = "llm"
    judge_name = "caim_llm"  # Verdict.judge

    def __init__(
        self,
        llm: LLMClient,
        seed: int | None = None,
        temperature: float = 0.0,
        metrics: Sequence[str] = CAIM_METRICS,
    ) -> None:
        for m in metrics:
            if m not in LEVELS:
                raise did_you_mean("caim metric", m, LEVELS)
        self.llm, self.seed, self.temperature, self.metrics = llm, seed, temperature, tuple(metrics)
        self.tasks = {}
        for m in self.metrics:
            task = rubric_task(m)
            self.tasks[m] = PromptTask(
                **{
                    **{f: getattr(task, f) for f in task.__dataclass_fields__},
                    "temperature": float(temperature),
                    "seed": seed,
                }
            )

    def judge_many(self, items: Sequence[CaimItem]) -> list[CaimVerdicts]:
        offline = self.llm.backend.offline
        fields = [
            {
                "_item": i,
                "question": i.question,
                "reference": i.reference or "(none)",
                "response": i.response,
                "retrieved": render_memories(i.recalled),
                "store": render_memories(i.store),
            }
            for i in items
        ]
        results: dict[str, list[TaskResult[float]]] = {}
        for m, task in self.tasks.items():
            if offline and task.offline is None:
                continue  # coherence has no honest offline twin: None, never invented
            results[m] = self.llm.run_many(task, fields, progress=False) if fields else []
        return [self._verdicts(j, item, results) for j, item in enumerate(items)]

    def _verdicts(
        self, j: int, item: CaimItem, results: dict[str, list[TaskResult[float]]]
    ) -> CaimVerdicts:
        """The verdicts of item ``j`` from each metric's results (docstring of the reasons)."""
        llm = (self.llm.backend.name, self.llm.model, RUBRIC_SOURCE)
        verdicts = {}
        for m in CAIM_METRICS:
            if m not in results:
                why = NO_OFFLINE_TWIN if m in self.tasks else NOT_ASKED
                verdicts[m] = metric_verdict(m, None, self.judge_name, why)
            elif m != "response_correctness" and item.answerable is False:
                verdicts[m] = metric_verdict(m, None, self.judge_name, NOT_APPLICABLE)
            else:
                r = results[m][j]
                verdicts[m] = metric_verdict(
                    m,
                    float(r.value),
                    self.judge_name,
                    raw=r.raw,
                    parsed=r.parsed,
                    failure=r.failure,
                    usage=r.usage_dict(),
                    llm=llm,
                )
        return CaimVerdicts(verdicts)

    def judge(self, item: CaimItem) -> CaimVerdicts:
        return self.judge_many([item])[0]

    def describe(self) -> Description:
        out = {
            "name": self.name,
            "backend": self.llm.backend.name,
            "model": self.llm.model,
            "seed": self.seed,
            "temperature": self.temperature,
        }
        if self.llm.backend.offline:
            out["note"] = "offline backend: lexical labels via the rubric parser; no coherence"
        return out
