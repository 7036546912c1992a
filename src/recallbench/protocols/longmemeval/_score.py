"""The summary of a ``longmemeval_qa`` run: accuracy as ``print_qa_metrics.py``, retrieval as
``run_retrieval.py``.

QA (the authors' ``src/evaluation/print_qa_metrics.py``): ``accuracy`` = the judge's yes share
over every answered question (their "Overall Accuracy"), with ``subsets`` per question type
(their per-task accuracy) and ``abstention`` (the ``_abs`` questions: their "Abstention
Accuracy"); ``task_averaged`` = the mean of the per-type accuracies (their "Task-averaged
Accuracy"; a type without questions in the run is left out, where theirs would print nan).

Retrieval (``_retrieval``): ``session_{recall_any,recall_all,ndcg_any}@{5,10}`` and
``turn_...@{5,10,50}`` per question, averaged over the questions the authors average: not
abstention (``_abs``) and with some user turn marked ``has_answer`` (``run_retrieval.py`` skips
the rest), and only answers that recorded a ranking (``meta["retrieval"]``); turn metrics only
for turn-granular rankings.

Intervals: every LongMemEval question is its own history (its own episode), so each question is
its own cluster: the bootstrap resamples questions (``metrics.bootstrap.clustered_entry`` over
``(episode, session, stats)`` rows, one row per question). ``task_averaged`` resamples questions
too and recomputes the mean of the per-type accuracies (estimator ``ratio_groups``).

A question whose answering call failed is not scored (``failed_calls_not_scored``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from recallbench.datasets.longmemeval import QUESTION_TYPES
from recallbench.llm.task import CALL_FAILURE, PARSE_FAILURE
from recallbench.metrics.bootstrap import clustered_entry
from recallbench.payloads import AnswerMeta, answer_meta
from recallbench.protocols.base import JudgedSummary
from recallbench.protocols.longmemeval._retrieval import NAMES, Gold, question_metrics
from recallbench.records import Prediction, Score
from recallbench.verdict import JSONValue, verdict_of

METRICS = ("accuracy", "task_averaged", *NAMES)


class LongMemEvalMeta(AnswerMeta, total=False):
    """The keys a ``longmemeval_qa`` answer adds to ``payloads.AnswerMeta`` (``_protocol``)."""

    question_id: str
    question_type: str
    abstention: bool
    retrieval: dict[str, JSONValue]  # ranked release ids: sessions, turns, granularity
    retrieval_gold: dict[str, JSONValue]  # Gold.to_dict()
    missing_questions: list[str]  # the release's questions the data copy lacks


def lme_meta(p: Prediction) -> LongMemEvalMeta:
    """``p.meta`` as a LongMemEval answer's: ``answer_meta``'s checks, then its own keys'."""
    meta = answer_meta(p)
    for key, kind in (("retrieval", dict), ("retrieval_gold", dict), ("missing_questions", list)):
        if key in meta and not isinstance(p.meta[key], kind):
            raise ValueError(f"prediction {p.pred_id}: meta.{key} should be a {kind.__name__}")
    return cast(LongMemEvalMeta, meta)


GROUPS = {"fn": "ratio_groups"}
Row = tuple[str, int, list[float]]


def item_values(p: Prediction) -> dict[str, float]:
    """The per-question values of one answer (absent: not scored for that metric)."""
    meta = lme_meta(p)
    out: dict[str, float] = {}
    verdict = verdict_of(p)
    if verdict is not None:
        out["accuracy"] = float(verdict.correct)
    ranked = meta.get("retrieval")
    gold_raw = meta.get("retrieval_gold")
    if isinstance(ranked, dict) and isinstance(gold_raw, dict) and not meta.get("abstention"):
        gold = Gold.from_dict(dict(gold_raw))
        if gold.has_target:
            out.update(
                question_metrics(
                    _ids(ranked.get("sessions")),
                    _ids(ranked.get("turns")),
                    str(ranked.get("granularity", "session")),
                    gold,
                )
            )
    return out


def _ids(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _entry(rows: list[tuple[Row, list[str]]]) -> dict[str, Any]:
    entry = clustered_entry([r for r, _ in rows], per_session=False)
    subsets = sorted({s for _, subs in rows for s in subs})
    entry["subsets"] = {
        s: clustered_entry([r for r, subs in rows if s in subs], per_session=False) for s in subsets
    }
    return entry


def _task_averaged(rows: list[tuple[Row, list[str]]]) -> dict[str, Any]:
    """Mean of the per-type accuracies, questions resampled (``ratio_groups`` rows)."""
    grouped: list[Row] = []
    for (episode, session, (x, _)), subsets in rows:
        stats = [0.0] * (2 * len(QUESTION_TYPES))
        for g, qtype in enumerate(QUESTION_TYPES):
            if qtype in subsets:
                stats[2 * g], stats[2 * g + 1] = x, 1.0
        grouped.append((episode, session, stats))
    return clustered_entry(grouped, GROUPS, per_session=False)


class LongMemEvalSummary(JudgedSummary, total=False):
    """A ``longmemeval_qa`` run's summary: a judged protocol's, with the retrieval rankings seen
    and the release's questions this data copy lacks."""

    retrieval: dict[str, JSONValue]  # answers with a ranking, their granularities, exclusions
    missing_questions: list[str]  # the release's questions this copy lacks (S here: 2 of 500)
    errata: dict[str, JSONValue]  # under errata: the source, entries and the questions flagged


def score_longmemeval(
    predictions: Sequence[Prediction],
) -> tuple[list[Score], LongMemEvalSummary]:
    """Return per-answer scores and the run summary of a ``longmemeval_qa`` run."""
    answers = [p for p in predictions if p.kind == "answer"]
    scored = [p for p in answers if not (p.failure or "").startswith(CALL_FAILURE)]
    rows: dict[str, list[tuple[Row, list[str]]]] = {"accuracy": []}
    scores: list[Score] = []
    for p in scored:
        subsets = list(answer_meta(p).get("subsets", []))
        for name, value in item_values(p).items():
            scores.append(Score(p.pred_id, name, value))
            rows.setdefault(name, []).append(
                ((p.episode_id, p.session_index, [value, 1.0]), subsets)
            )
    metrics = {name: _entry(r) for name, r in rows.items()}
    metrics["task_averaged"] = _task_averaged(rows["accuracy"])
    verdicts = [v for v in map(verdict_of, answers) if v is not None]
    ranked = [p for p in scored if "retrieval" in p.meta]
    kinds = sorted({str(p.meta["retrieval"]["granularity"]) for p in ranked})
    granularities: list[JSONValue] = [*kinds]
    summary: LongMemEvalSummary = {
        "metrics": metrics,
        "failed_calls_not_scored": len(answers) - len(scored),
        "answer_failures": sum(1 for p in answers if p.failure),
        "judge": {
            "judged": len(verdicts),
            "parse_failures": sum(1 for v in verdicts if v.failed(PARSE_FAILURE)),
            "call_failures": sum(1 for v in verdicts if v.failed(CALL_FAILURE)),
        },
        "retrieval": {
            "ranked_answers": len(ranked),
            "granularity": granularities,
            "excluded": (
                "abstention questions and questions without a has_answer user turn, as "
                "run_retrieval.py"
            ),
        },
        "aggregation": (
            "accuracy: the judge's yes share over the answered questions, subsets per question "
            "type and abstention; task_averaged: the mean of the per-type accuracies; retrieval: "
            "non-abstention questions with a has_answer user turn whose answer recorded a ranking; "
            "intervals resample questions (each question is its own history, its own cluster)"
        ),
    }
    missing = sorted({q for p in answers for q in lme_meta(p).get("missing_questions", [])})
    if missing:  # the release's questions this data copy lacks (S here: 498 of 500)
        summary["missing_questions"] = missing
    return scores, summary
