"""LongMemEval's QA protocol (``longmemeval_qa``) and its scoring: accuracy and retrieval metrics.

from recallbench.protocols.longmemeval import LongMemEvalQAProtocol, question_metrics

See ``_protocol`` (replay, reading, what each answer records), ``_tasks`` (the authors' reading
and Chain-of-Note prompts), ``_retrieval`` (the authors' retrieval metrics from ranked ids) and
``_score`` (the run summary: accuracy per type, task-averaged, abstention, retrieval).
"""

from recallbench.protocols.longmemeval._protocol import LongMemEvalQAProtocol
from recallbench.protocols.longmemeval._retrieval import (
    NAMES,
    Gold,
    corpus_of,
    dcg,
    evaluate,
    evaluate_turn2session,
    gold_of,
    question_metrics,
)
from recallbench.protocols.longmemeval._score import (
    METRICS,
    LongMemEvalMeta,
    LongMemEvalSummary,
    item_values,
    lme_meta,
    score_longmemeval,
)
from recallbench.protocols.longmemeval._tasks import CON_PROMPT, READ_PROMPT, READ_PROMPT_COT

__all__ = [
    "CON_PROMPT",
    "METRICS",
    "NAMES",
    "READ_PROMPT",
    "READ_PROMPT_COT",
    "Gold",
    "LongMemEvalMeta",
    "LongMemEvalQAProtocol",
    "LongMemEvalSummary",
    "corpus_of",
    "dcg",
    "evaluate",
    "evaluate_turn2session",
    "gold_of",
    "item_values",
    "lme_meta",
    "question_metrics",
    "score_longmemeval",
]
