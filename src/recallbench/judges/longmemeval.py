"""Judge ``longmemeval``: the LongMemEval QA judge (Wu et al., ICLR 2025; arXiv 2410.10813).

Prompts: the authors' five yes/no templates of ``get_anscheck_prompt`` in their
``src/evaluation/evaluate_qa.py`` (xiaowu0162/LongMemEval, MIT licence, Copyright (c) 2024 Di
Wu), word for word, trailing spaces included. They are chosen by the question's type and by
abstention, as there:

- abstention (``'_abs' in question_id``, any type): did the response identify the question as
  unanswerable;
- ``single-session-user``, ``single-session-assistant``, ``multi-session``: does the response
  contain the correct answer;
- ``temporal-reasoning``: the same, and off-by-one errors in a number of days are not penalized;
- ``knowledge-update``: a response with earlier information is correct when the updated answer
  is the required one;
- ``single-session-preference``: does the response satisfy the rubric (the ``answer`` field).

Any other type is an error (the authors' ``NotImplementedError``), naming it and the types.
The reference fills the templates positionally (``template.format(question, answer,
response)``); here the same text has named fields, and the tests render both and compare.

Decoding as the reference: one user message, temperature 0, ``max_tokens`` 10 (n = 1). The
paper's judge model is ``gpt-4o-2024-08-06`` (``PAPER_MODEL``): ``conf/judge/longmemeval.yaml``
judges with the run's own generator unless ``judge.generator='{backend: openai, model:
gpt-4o-2024-08-06}'``; ``describe()`` names any other judge model as not the paper's.

Verdict: ``'yes' in reply.lower()`` on the stripped reply, exactly the authors' rule. It is a
substring test by their choice, not the house's exact-token parsing: "Yes.", "yes, it does" and
also "no, not yes" count as yes; a reply without "yes" anywhere is no. So no reply is ever
unparseable (``parsed`` is always True). Each verdict's ``info["reply_exact"]`` says whether the
reply was exactly one word yes or no (case and one trailing period aside), so the replies the
substring rule decided can be counted. Labels: yes -> 1 (correct), no -> 0 (incorrect); the
judge has no don't-know label (an abstention question's "yes" is the correct answer).

Offline twin (extractive backend; ``offline_reply``, rules in ``judges._longmemeval_twin``): no
LLM, deterministic, NOT the paper's judge (``describe()`` says so): declines for abstention,
else the ``lexical`` match of the key, with off-by-one numbers for temporal questions.

Deviations:
- Items without a question type (a generic caller such as the judge panel hands plain
  ``JudgeItem``s) are judged with the ``default_type`` template (config key, default
  ``single-session-user``); the ``longmemeval_qa`` protocol passes ``LongMemEvalItem``s.
- The offline twin is ours (above); the paper's judge is gpt-4o-2024-08-06.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from recallbench.datasets.longmemeval import QUESTION_TYPES
from recallbench.errors import ConfigError, DatasetFormatError
from recallbench.judges._longmemeval_twin import UNANSWERABLE_CUES, alternatives, offline_reply
from recallbench.judges.base import CORRECT, INCORRECT, Description, Judge, JudgeItem, Verdict
from recallbench.judges.lexical import LexicalJudge
from recallbench.llm.protocol import LLMClient
from recallbench.llm.shapes import Choice
from recallbench.llm.task import PromptTask
from recallbench.verdict import JSONValue

__all__ = [
    "PAPER_MODEL",
    "PROMPT_SOURCE",
    "QUESTION_TYPES",
    "TEMPLATES",
    "UNANSWERABLE_CUES",
    "LongMemEvalItem",
    "LongMemEvalJudge",
    "alternatives",
    "anscheck_prompt",
    "branch",
    "is_abstention",
    "make_task",
    "offline_reply",
    "parse_yes",
    "reply_exact",
]

# xiaowu0162/LongMemEval src/evaluation/evaluate_qa.py get_anscheck_prompt (MIT, (c) 2024 Di Wu),
# word for word; only the positional {} became named fields.
DEFAULT_PROMPT = "I will give you a question, a correct answer, and a response from a model. Please answer yes if the response contains the correct answer. Otherwise, answer no. If the response is equivalent to the correct answer or contains all the intermediate steps to get the correct answer, you should also answer yes. If the response only contains a subset of the information required by the answer, answer no. \n\nQuestion: {question}\n\nCorrect Answer: {answer}\n\nModel Response: {response}\n\nIs the model response correct? Answer yes or no only."  # noqa: E501
TEMPORAL_PROMPT = "I will give you a question, a correct answer, and a response from a model. Please answer yes if the response contains the correct answer. Otherwise, answer no. If the response is equivalent to the correct answer or contains all the intermediate steps to get the correct answer, you should also answer yes. If the response only contains a subset of the information required by the answer, answer no. In addition, do not penalize off-by-one errors for the number of days. If the question asks for the number of days/weeks/months, etc., and the model makes off-by-one errors (e.g., predicting 19 days when the answer is 18), the model's response is still correct. \n\nQuestion: {question}\n\nCorrect Answer: {answer}\n\nModel Response: {response}\n\nIs the model response correct? Answer yes or no only."  # noqa: E501
KNOWLEDGE_UPDATE_PROMPT = "I will give you a question, a correct answer, and a response from a model. Please answer yes if the response contains the correct answer. Otherwise, answer no. If the response contains some previous information along with an updated answer, the response should be considered as correct as long as the updated answer is the required answer.\n\nQuestion: {question}\n\nCorrect Answer: {answer}\n\nModel Response: {response}\n\nIs the model response correct? Answer yes or no only."  # noqa: E501
PREFERENCE_PROMPT = "I will give you a question, a rubric for desired personalized response, and a response from a model. Please answer yes if the response satisfies the desired response. Otherwise, answer no. The model does not need to reflect all the points in the rubric. The response is correct as long as it recalls and utilizes the user's personal information correctly.\n\nQuestion: {question}\n\nRubric: {answer}\n\nModel Response: {response}\n\nIs the model response correct? Answer yes or no only."  # noqa: E501
ABSTENTION_PROMPT = "I will give you an unanswerable question, an explanation, and a response from a model. Please answer yes if the model correctly identifies the question as unanswerable. The model could say that the information is incomplete, or some other information is given but the asked information is not.\n\nQuestion: {question}\n\nExplanation: {answer}\n\nModel Response: {response}\n\nDoes the model correctly identify the question as unanswerable? Answer yes or no only."  # noqa: E501
PROMPT_SOURCE = (
    "LongMemEval (Wu et al., ICLR 2025): copied unchanged from the authors' code, "
    "xiaowu0162/LongMemEval src/evaluation/evaluate_qa.py get_anscheck_prompt (MIT)"
)
PAPER_MODEL = "gpt-4o-2024-08-06"  # evaluate_qa.py model_zoo['gpt-4o'], the paper's judge
MAX_TOKENS = 10  # evaluate_qa.py: 'max_tokens': 10, 'temperature': 0, 'n': 1

# The template each question type of the release gets (abstention overrides); the types are
# the loader's (datasets.longmemeval.QUESTION_TYPES).
BRANCH_OF = {
    "single-session-user": "default",
    "single-session-assistant": "default",
    "multi-session": "default",
    "temporal-reasoning": "temporal",
    "knowledge-update": "knowledge_update",
    "single-session-preference": "preference",
}
TEMPLATES = {
    "default": DEFAULT_PROMPT,
    "temporal": TEMPORAL_PROMPT,
    "knowledge_update": KNOWLEDGE_UPDATE_PROMPT,
    "preference": PREFERENCE_PROMPT,
    "abstention": ABSTENTION_PROMPT,
}
ABSTENTION_MARK = "_abs"  # evaluate_qa.py: abstention='_abs' in entry['question_id']


def is_abstention(question_id: str) -> bool:
    """The authors' rule: a question is an abstention question when its id contains ``_abs``."""
    return ABSTENTION_MARK in question_id


def branch(question_type: str, abstention: bool) -> str:
    """The template a question gets (``TEMPLATES`` key), as ``get_anscheck_prompt`` chooses it."""
    if question_type not in BRANCH_OF:
        raise DatasetFormatError(
            f"LongMemEval judge: unknown question type {question_type!r} "
            f"(expected one of {', '.join(QUESTION_TYPES)})"
        )
    return "abstention" if abstention else BRANCH_OF[question_type]


def anscheck_prompt(
    question_type: str, question: str, answer: object, response: str, abstention: bool = False
) -> str:
    """The judge prompt of one question, as the authors' ``get_anscheck_prompt`` returns it."""
    template = TEMPLATES[branch(question_type, abstention)]
    return template.format(question=question, answer=answer, response=response)


def parse_yes(reply: str) -> int:
    """The authors' verdict: 1 when ``'yes' in reply.strip().lower()``, else 0 (a substring test)."""
    return CORRECT if "yes" in reply.strip().lower() else INCORRECT


def reply_exact(reply: str) -> bool:
    """Whether the reply is one word yes or no (case and one trailing period aside)."""
    return reply.strip().lower().removesuffix(".").strip() in ("yes", "no")


def make_task(branch_name: str, lexical: LexicalJudge | None = None) -> PromptTask[int]:
    """The PromptTask of one template; offline it answers with ``offline_reply``."""
    twin = lexical or LexicalJudge()

    def offline(question: str, answer: str, response: str, **_: object) -> str:
        return offline_reply(question, answer, response, branch_name, twin)

    return PromptTask(
        name=f"judge.longmemeval.{branch_name}",
        template=TEMPLATES[branch_name],
        parse=parse_yes,
        offline=offline,
        fallback=INCORRECT,
        stage="judge",
        max_tokens=MAX_TOKENS,
        temperature=0.0,
        source=PROMPT_SOURCE,
        reply=Choice(("yes", "no")),
    )


@dataclass(frozen=True)
class LongMemEvalItem(JudgeItem):
    """A LongMemEval answer to judge: ``JudgeItem`` plus the question's type and abstention.

    ``label_answer`` is the answer key (the rubric for preference questions, the explanation for
    abstention ones); ``answer`` the response to judge.
    """

    question_type: str = "single-session-user"
    abstention: bool = False

    @classmethod
    def of(
        cls, question_id: str, question_type: str, question: str, answer: object, response: str
    ) -> LongMemEvalItem:
        """An item with abstention decided from the id as the authors do (``'_abs' in id``)."""
        return cls(question, str(answer), response, question_type, is_abstention(question_id))


class LongMemEvalJudge(Judge):
    """Judge answers yes/no with the LongMemEval prompts on ``llm`` (any backend).

    Args:
        llm: a ``recallbench.llm.LLM``; on the extractive backend the verdicts are the offline
            twin's (module docstring), through the same parser.
        default_type: the question type of items that carry none (plain ``JudgeItem``s).
        threshold, fuzzy: the offline twin's lexical match (``judges.lexical``).
    """

    name = "longmemeval"

    def __init__(
        self,
        llm: LLMClient,
        default_type: str = "single-session-user",
        threshold: float = 0.5,
        fuzzy: float = 0.8,
    ) -> None:
        if default_type not in BRANCH_OF:
            raise ConfigError(
                f"judge longmemeval: default_type {default_type!r} is not a question type "
                f"(expected one of {', '.join(QUESTION_TYPES)})"
            )
        self.llm, self.default_type = llm, default_type
        self.lexical = LexicalJudge(threshold, fuzzy)
        self.tasks = {b: make_task(b, self.lexical) for b in TEMPLATES}

    def _typed(self, item: JudgeItem) -> tuple[str, bool]:
        if isinstance(item, LongMemEvalItem):
            return item.question_type, item.abstention
        return self.default_type, False

    def judge(self, question: str, label_answer: str, answer: str) -> Verdict:
        return self.judge_many([JudgeItem(question, label_answer, answer)])[0]

    def judge_many(self, items: Sequence[JudgeItem]) -> list[Verdict]:
        """Judge items, each with its type's template; order is kept (one batch per template)."""
        typed = [self._typed(i) for i in items]
        branches = [branch(t, a) for t, a in typed]
        out: list[Verdict | None] = [None] * len(items)
        for b, task in self.tasks.items():
            idx = [k for k, bk in enumerate(branches) if bk == b]
            if not idx:
                continue
            fields = [
                {
                    "question": items[k].question,
                    "answer": items[k].label_answer,
                    "response": items[k].answer,
                }
                for k in idx
            ]
            for k, r in zip(idx, self.llm.run_many(task, fields, progress=False), strict=True):
                info: dict[str, JSONValue] = {
                    "question_type": typed[k][0],
                    "abstention": typed[k][1],
                    "template": b,
                    "reply_exact": reply_exact(r.raw),
                }
                out[k] = Verdict(
                    label=int(r.value),
                    raw=r.raw,
                    parsed=r.failure is None,
                    failure=r.failure,
                    usage=r.usage_dict(),
                    info=info,
                    judge=self.name,
                    backend=self.llm.backend.name,
                    model=self.llm.model,
                    prompt=PROMPT_SOURCE,
                )
        return [v for v in out if v is not None]

    def describe(self) -> Description:
        backend = self.llm.backend.name
        out: Description = {"name": self.name, "backend": backend, "model": self.llm.model}
        out["default_type"] = self.default_type
        if self.llm.backend.offline:
            out["note"] = (
                "offline backend: verdicts are the offline twin's (lexical, off-by-one days, "
                f"declines), not the paper's {PAPER_MODEL} judge"
            )
        elif self.llm.model != PAPER_MODEL:
            out["note"] = f"judge model {self.llm.model}, not the paper's {PAPER_MODEL}"
        return out
