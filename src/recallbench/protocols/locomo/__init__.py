"""LoCoMo's QA protocol (``locomo_qa``) and its scoring: answer F1, Mem0's J, recall@k.

from recallbench.protocols.locomo import LocomoQAProtocol, locomo_f1, recall_at

See ``_protocol`` (replay, prompts, options), ``_scoring`` (LoCoMo's F1 rules, recall@k) and
``_score`` (the run summary per category with clustered intervals), ``_errata`` (the clean
subset, the ceiling and release-key verdicts under errata), ``_mem0_scores`` (Mem0's
B1 and its own F1), ``_tasks`` (the authors' prompts as PromptTasks, category-5 options).
"""

from recallbench.protocols.locomo._errata import (
    CLEAN,
    RELEASE_KEY,
    errata_meta,
    errata_summary,
)
from recallbench.protocols.locomo._mem0_scores import mem0_b1, mem0_f1
from recallbench.protocols.locomo._protocol import LocomoQAProtocol
from recallbench.protocols.locomo._score import (
    METRICS,
    LocomoSummary,
    item_values,
    score_locomo,
)
from recallbench.protocols.locomo._scoring import (
    adversarial_credit,
    f1_multi,
    f1_score,
    locomo_f1,
    normalize_answer,
    recall_at,
)
from recallbench.protocols.locomo._tasks import (
    ADVERSARIAL_TASK,
    ANSWER_TASK,
    ask_session,
    choice_answer,
    options_for,
)

__all__ = [
    "LocomoSummary",
    "ADVERSARIAL_TASK",
    "ANSWER_TASK",
    "CLEAN",
    "RELEASE_KEY",
    "METRICS",
    "LocomoQAProtocol",
    "adversarial_credit",
    "ask_session",
    "choice_answer",
    "errata_meta",
    "errata_summary",
    "f1_multi",
    "f1_score",
    "item_values",
    "locomo_f1",
    "mem0_b1",
    "mem0_f1",
    "normalize_answer",
    "options_for",
    "recall_at",
    "score_locomo",
]
