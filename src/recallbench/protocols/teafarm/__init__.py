"""Protocol ``teafarm``: counterfactual questions after the history (THEANINE sec. 5, App. C/D).

The protocol is in ``_teafarm``; ``_tasks``: the paper's prompts as PromptTasks (offline twins in
``_offline``); ``_questions``: where the counterfactual questions come from.
"""

from recallbench.protocols.teafarm._tasks import (
    JUDGE_PROMPT,
    JUDGE_TASK,
    QUESTION_PROMPT,
    QUESTION_TASK,
    SESSION6_PROMPT,
    SESSION6_TASK,
    SUMMARY_TASK,
    counterfactual,
    lexical_verdict,
    parse_dialogue,
    parse_questions,
    parse_verdict,
    third_person,
)
from recallbench.protocols.teafarm._teafarm import TEAFARM_METRICS, TeaFarmProtocol

__all__ = [
    "JUDGE_PROMPT",
    "JUDGE_TASK",
    "QUESTION_PROMPT",
    "QUESTION_TASK",
    "SESSION6_PROMPT",
    "SESSION6_TASK",
    "SUMMARY_TASK",
    "TEAFARM_METRICS",
    "TeaFarmProtocol",
    "counterfactual",
    "lexical_verdict",
    "parse_dialogue",
    "parse_questions",
    "parse_verdict",
    "third_person",
]
