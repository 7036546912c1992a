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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recallbench.errors import ConfigError, did_you_mean
from recallbench.judges.lexical import is_dont_know, match
from recallbench.llm.task import ParseError, PromptTask
from recallbench.records import MemoryItem

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


@dataclass(frozen=True)
class CaimVerdict:
    """Scores of one question; a metric's value is None when unavailable or not applicable."""

    scores: dict[str, float | None]
    raw: dict[str, str] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (stored in ``Prediction.meta["caim"]``)."""
        return {
            "scores": dict(self.scores),
            "raw": dict(self.raw),
            "failures": dict(self.failures),
            "info": dict(self.info),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CaimVerdict:
        return cls(
            dict(d["scores"]),
            dict(d.get("raw") or {}),
            dict(d.get("failures") or {}),
            dict(d.get("info") or {}),
        )


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

    def judge(self, item: CaimItem) -> CaimVerdict:
        """Score one question; all None when no answer key covers it."""
        scores: dict[str, float | None] = dict.fromkeys(CAIM_METRICS)
        if item.answerable is None:
            return CaimVerdict(scores, info={"unkeyed": True})
        declined = is_dont_know(item.response)
        if not item.answerable:
            scores["response_correctness"] = 1.0 if declined else 0.0
            return CaimVerdict(scores, info={"declined": declined})
        c_store, store_ids = self.held(item, item.store)
        c_recall, recall_ids = self.held(item, item.recalled)
        c_resp = 0.0 if declined else coverage(item, item.response, self.fuzzy)
        scores.update(
            retrieval_accuracy=1.0 if c_recall >= self.threshold else 0.0,
            response_correctness=_graded(c_resp, self.threshold),
            memory_storage=_graded(c_store, self.threshold),
        )
        info = {
            "coverage": {"store": c_store, "recalled": c_recall, "response": c_resp},
            "eligible_store": len(store_ids),
            "eligible_recalled": recall_ids,
            "declined": declined,
        }
        return CaimVerdict(
            scores, raw={k: str(v) for k, v in scores.items() if v is not None}, info=info
        )

    def judge_many(self, items: Sequence[CaimItem]) -> list[CaimVerdict]:
        return [self.judge(i) for i in items]

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "threshold": self.threshold,
            "fuzzy": self.fuzzy,
            "contextual_coherence": "unavailable offline (no lexical proxy)",
        }


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


def rubric_task(metric: str, offline_judge: LexicalCaimJudge | None = None) -> PromptTask:
    """Return the rubric PromptTask of ``metric``; offline it answers with the lexical label."""
    levels = LEVELS[metric]
    lexical = offline_judge or LexicalCaimJudge()
    offline = None
    if metric != "contextual_coherence":

        def offline(_item: CaimItem, **_: Any) -> str:
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

    def __init__(
        self,
        llm,
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

    def judge_many(self, items: Sequence[CaimItem]) -> list[CaimVerdict]:
        offline = bool(getattr(self.llm.backend, "offline", False))
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
        results: dict[str, list] = {}
        for m, task in self.tasks.items():
            if offline and task.offline is None:
                continue  # coherence has no honest offline twin: None, never invented
            results[m] = self.llm.run_many(task, fields, progress=False) if fields else []
        out = []
        for j, item in enumerate(items):
            scores: dict[str, float | None] = dict.fromkeys(CAIM_METRICS)
            raw, failures = {}, {}
            for m, rs in results.items():
                if m != "response_correctness" and item.answerable is False:
                    continue  # no relevant memory exists for an unanswerable question
                scores[m], raw[m] = float(rs[j].value), rs[j].raw
                if rs[j].failure:
                    failures[m] = rs[j].failure
            out.append(CaimVerdict(scores, raw, failures))
        return out

    def judge(self, item: CaimItem) -> CaimVerdict:
        return self.judge_many([item])[0]

    def describe(self) -> dict[str, Any]:
        out = {
            "name": self.name,
            "backend": self.llm.backend.name,
            "model": self.llm.model,
            "seed": self.seed,
            "temperature": self.temperature,
        }
        if getattr(self.llm.backend, "offline", False):
            out["note"] = "offline backend: lexical labels via the rubric parser; no coherence"
        return out


CAIM_JUDGES = ("lexical", "llm")


def build_caim_judge(cfg: Mapping[str, Any] | None, llm=None):
    """Build a CAIM judge from ``{"name": "lexical"|"llm", ...}`` (``llm`` may bring a
    ``generator`` mapping and ``cache_path``, else it judges with the run's LLM)."""
    params = {str(k): v for k, v in dict(cfg or {"name": "lexical"}).items()}
    name = params.pop("name", None)
    params.pop("label", None)
    if name not in CAIM_JUDGES:
        raise did_you_mean("caim judge", str(name), CAIM_JUDGES)
    if name == "lexical":
        try:
            return LexicalCaimJudge(**params)
        except TypeError as exc:
            raise ConfigError(f"caim judge lexical: bad keys {sorted(params)}: {exc}") from exc
    generator, cache_path = params.pop("generator", None), params.pop("cache_path", None)
    if generator is not None:
        from recallbench.llm import build_llm

        llm = build_llm(dict(generator), Path(cache_path) if cache_path else None)
    if llm is None:
        raise ConfigError("caim judge llm: no generator configured and no run LLM given")
    try:
        return LLMCaimJudge(llm, **params)
    except TypeError as exc:
        raise ConfigError(f"caim judge llm: bad keys {sorted(params)}: {exc}") from exc
