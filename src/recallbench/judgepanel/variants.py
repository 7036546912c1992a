"""Judge prompt variants of the panel: the papers' own judge prompts and two alternatives.

Each variant is a PromptTask plus how its parsed reply becomes *credit* in [0, 1] (what the
panel's acceptance rates average) and whether it says "don't know":

- ``lufy_c1``: LUFY App. C.1, verbatim (``judges.llm.QA_JUDGE_PROMPT``): 1 -> credit 1, 0 -> 0,
  2 (don't-know) -> 0 and counted as unanswered. Offline twin: the lexical judge.
- ``caim_correctness``: CAIM's Response Correctness rubric (``judges.caim.CORRECTNESS_PROMPT``,
  ours from CAIM sec. 4.1.3; 0 / 0.5 / 1 -> that credit). Offline twin: the CAIM lexical
  judge's correctness (coverage of the answer's key tokens, no answer-key keywords here).
- ``teafarm_fig29``: THEANINE Fig. 29, verbatim (``protocols.teafarm.JUDGE_TASK``):
  Correct -> 1, Incorrect -> 0. Offline twin: TeaFarm's lexical verdict, on ``teafarm`` runs
  only (``twin_for``): it weighs the correct answer's words against the counterfactual
  premise's (the question's words), so on a plain question it rejects every answer that
  restates the question (measured on a LUFY run: 2% of the answers the lexical judge gives
  32%); elsewhere it is unavailable offline, like the alternatives.
- ``mem0_j``: Mem0's J prompt, verbatim (``judges.mem0_j.J_TASK``, the judge of LoCoMo runs):
  CORRECT -> 1, WRONG -> 0. Offline twin: the lexical judge's verdict as J's JSON, on LoCoMo
  runs only (``locomo_qa``, ``locomo_import``); elsewhere unavailable offline.
- ``lenient`` and ``strict`` (ours, below; sources in ``LENIENT_SOURCE`` / ``STRICT_SOURCE``):
  CORRECT -> 1, WRONG -> 0. No offline twin: on the extractive backend they are unavailable
  (n/a in every table), never imitated by a lexical rule.

Replies are parsed as exact tokens (the papers' parsers; ``parse_correct_wrong`` below): an
unparseable reply gets the task's fallback (no credit) and is counted as a parse failure.

Deviations: the CAIM rubric reads the gold answer as its reference (``Answer key: ...``); the
run's own GVD judge also saw the evidence turns (``protocols.qa_gvd.scores.reference_text``). The
probes replace the answer, not the evidence, so the panel keeps the reference to the key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from recallbench.errors import did_you_mean
from recallbench.judges import CORRECT, DONT_KNOW
from recallbench.judges.caim import CaimItem, rubric_task
from recallbench.judges.llm import make_qa_judge_task
from recallbench.judges.mem0_j import J_TASK
from recallbench.llm.task import ParseError, PromptTask
from recallbench.protocols.teafarm import JUDGE_TASK

# Ours, modeled on the LoCoMo judge prompt that mem0's evaluation distributes (mem0ai/mem0
# evaluation/metrics/llm_judge.py, ACCURACY_PROMPT), which snap-research/locomo#23 quotes as
# Backboard's and calls "generous by design": an answer on the same topic as the gold answer
# counts, and so does the same date in any form. Our wording; one-word reply.
LENIENT_PROMPT = """You are grading an answer to a question about a user, given by a chatbot that has talked with the user before.

Question: {question}
Gold answer: {gold_answer}
Answer to grade: {answer}

Grade generously. The answer may be much longer than the gold answer or word it differently: count it as CORRECT as long as it is about the same topic as the gold answer. For a date or a time, count it as CORRECT when it refers to the same date or period, in any format or as a relative expression. Otherwise it is WRONG.

Reply with exactly one word: CORRECT or WRONG."""  # noqa: E501
LENIENT_SOURCE = (
    "ours, modeled on the generous LoCoMo judge prompt distributed with mem0's evaluation "
    "(mem0ai/mem0 evaluation/metrics/llm_judge.py; snap-research/locomo#23; re-scored in "
    "mem0ai/memory-benchmarks#29 = mem0ai/mem0#7235)"
)

# Ours, modeled on the deliberately strict grading prompt of "The Judge Is the Benchmark"
# (mem0ai/memory-benchmarks#29: the same published LoCoMo answers score 91.0% under the
# distributed prompt and 35.0% under the strict one; the thread does not print its text), on
# snap-research/locomo#23 (a judge accepts 62.8% of vague-but-topical and 10.6% of
# specific-but-wrong answers) and EverMind-AI/EverOS#8 (long answers inflate acceptance).
STRICT_PROMPT = """You are grading an answer to a question about a user, given by a chatbot that has talked with the user before.

Question: {question}
Gold answer: {gold_answer}
Answer to grade: {answer}

Grade strictly. The answer is CORRECT only if it states the specific information of the gold answer: the same person, thing, place, number, date or fact (a paraphrase or extra words around it are fine). It is WRONG if it only talks about the topic of the question without that specific information, if it states other specifics that conflict with the gold answer, if it lists several candidates without committing to the right one, or if it is empty or declines to answer. Length never earns credit.

Reply with exactly one word: CORRECT or WRONG."""  # noqa: E501
STRICT_SOURCE = (
    "ours, modeled on the strict prompt of 'The Judge Is the Benchmark' "
    "(mem0ai/memory-benchmarks#29 = mem0ai/mem0#7235), snap-research/locomo#23 and "
    "EverMind-AI/EverOS#8"
)

_STRIP = " \t\r\n`*\"'"


def parse_correct_wrong(reply: str) -> bool:
    """Parse a one-word reply: exactly CORRECT or WRONG (any case); True = CORRECT."""
    text = reply.strip(_STRIP)
    if text.endswith("."):
        text = text[:-1].strip(_STRIP)
    if text.upper() in ("CORRECT", "WRONG"):
        return text.upper() == "CORRECT"
    raise ParseError(f"reply must be exactly CORRECT or WRONG, got {reply[:60]!r}")


@dataclass(frozen=True)
class JudgeInput:
    """What a judge sees of one answer: the question, the gold answer and the answer."""

    question: str
    reference: str
    answer: str


@dataclass(frozen=True)
class Variant:
    """A judge prompt: its task, the task fields of an input, and credit of a parsed value."""

    name: str
    task: PromptTask[Any]  # each paper's prompt parses to its own type; credit reads that type
    fields: Callable[[JudgeInput], Mapping[str, object]]
    credit: Callable[[Any], float]
    dont_know: Callable[[Any], bool] | None  # None: the prompt has no don't-know label
    paper: str | None  # whose judge it is (lufy, caim, theanine); None: ours
    twin_for: tuple[str, ...] | None = None  # protocols its offline twin fits; None: every one

    def twin_fits(self, protocol: str | None) -> bool:
        """True when the offline twin exists and was built for ``protocol``'s items."""
        if self.task.offline is None:
            return False
        return self.twin_for is None or protocol in self.twin_for

    @property
    def source(self) -> str:
        return self.task.source


def _binary(value: Any) -> float:
    return 1.0 if value else 0.0


def _c1_fields(i: JudgeInput) -> dict[str, Any]:
    return {"question": i.question, "label_answer": i.reference, "answer_to_judge": i.answer}


def _caim_fields(i: JudgeInput) -> dict[str, Any]:
    item = CaimItem(
        question=i.question,
        response=i.answer,
        answers=(i.reference,),
        answerable=True,
        reference=f"Answer key: {i.reference}",
    )
    return {
        "_item": item,
        "question": i.question,
        "reference": item.reference,
        "response": i.answer,
    }


def _fig29_fields(i: JudgeInput) -> dict[str, Any]:
    return {"query": i.question, "answer": i.reference, "response": i.answer}


def _ours_fields(i: JudgeInput) -> dict[str, Any]:
    return {"question": i.question, "gold_answer": i.reference, "answer": i.answer}


def _ours(name: str, template: str, source: str) -> PromptTask[bool]:
    return PromptTask(
        name=f"judge.panel.{name}",
        template=template,
        parse=parse_correct_wrong,
        offline=None,  # no honest offline twin: n/a on the extractive backend
        fallback=False,
        stage="judge",
        max_tokens=4,
        temperature=0.0,
        source=source,
    )


def build_variants() -> dict[str, Variant]:
    """Return every prompt variant by name (module docstring)."""
    caim = rubric_task("response_correctness")
    return {
        "lufy_c1": Variant(
            "lufy_c1",
            make_qa_judge_task(),
            _c1_fields,
            lambda v: 1.0 if v == CORRECT else 0.0,
            lambda v: v == DONT_KNOW,
            "lufy",
        ),
        "caim_correctness": Variant("caim_correctness", caim, _caim_fields, float, None, "caim"),
        "teafarm_fig29": Variant(
            "teafarm_fig29", JUDGE_TASK, _fig29_fields, _binary, None, "theanine", ("teafarm",)
        ),
        "mem0_j": Variant(
            "mem0_j",
            J_TASK,
            _c1_fields,
            lambda v: 1.0 if v == CORRECT else 0.0,
            None,
            "mem0",
            ("locomo_qa", "locomo_import"),
        ),
        "lenient": Variant(
            "lenient",
            _ours("lenient", LENIENT_PROMPT, LENIENT_SOURCE),
            _ours_fields,
            _binary,
            None,
            None,
        ),
        "strict": Variant(
            "strict",
            _ours("strict", STRICT_PROMPT, STRICT_SOURCE),
            _ours_fields,
            _binary,
            None,
            None,
        ),
    }


VARIANTS: Mapping[str, Variant] = build_variants()
# The paper whose judge each protocol uses (the table marks that variant "own").
OWN_VARIANT = {
    "qa": "lufy_c1",
    "qa_gvd": "caim_correctness",
    "teafarm": "teafarm_fig29",
    "locomo_qa": "mem0_j",
    "locomo_import": "mem0_j",
}


def pick_variants(names: list[str] | None) -> list[Variant]:
    """Return the named variants (all when ``names`` is None); "did you mean" on a miss."""
    if names is None:
        return list(VARIANTS.values())
    out = []
    for name in names:
        if name not in VARIANTS:
            raise did_you_mean("judge prompt variant", name, VARIANTS)
        out.append(VARIANTS[name])
    return out
