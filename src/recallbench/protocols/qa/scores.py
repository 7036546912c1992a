"""Scores of protocol ``qa`` (LUFY Table 11, Tables 16-18, Table 3).

For session ``s`` and the questions created after session ``q`` (a "question-session"):
precision P = correct / (correct + incorrect) (0 when nothing was answered), recall R = correct /
asked, F1 = 2PR / (P + R) (0 when P + R = 0). ``per_session[s]`` is the mean over the
question-sessions q <= s (this reproduces Table 11 from Tables 16-18), F1 from that P and R;
``session_mean`` is the mean over sessions (the tables' "Avg."); ``value`` pools every judgment
of the run (micro average). Memory states (``kind="memory"`` predictions) give ``retained``,
``created`` and ``retention_rate``: means over episodes of the per-episode values per session
(Table 3); their ``value`` is the last session's.

Intervals: every value (pooled, per session, per question-session, the mean over sessions) has
an episode-clustered bootstrap ``ci95`` (``metrics.bootstrap``): LUFY asks the same questions
again after every session, so the episode, not the judgment, is the unit of resampling. The
per-episode counts are kept under ``bootstrap`` for paired tests between runs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from recallbench.judges import CORRECT, DONT_KNOW, INCORRECT
from recallbench.llm.task import CALL_FAILURE, PARSE_FAILURE
from recallbench.metrics.bootstrap import Additive, ClusterStatistic, MeanOf, ci_fields
from recallbench.payloads import MemoryStateMeta, answer_meta, memory_meta
from recallbench.protocols.base import JudgedSummary
from recallbench.records import JSON, Prediction, Score
from recallbench.verdict import require_verdict

RATIO = {"fn": "ratio"}
QA_METRICS = (
    "precision",
    "recall",
    "f1",
    "dont_know_rate",
    "retained",
    "created",
    "retention_rate",
)


def prf(correct: int, incorrect: int, asked: int) -> tuple[float, float, float]:
    """Return LUFY precision, recall and F1 (each 0 when undefined)."""
    answered = correct + incorrect
    precision = correct / answered if answered else 0.0
    recall = correct / asked if asked else 0.0
    return precision, recall, f1(precision, recall)


def f1(precision: float, recall: float) -> float:
    """Harmonic mean of precision and recall (0 when both are 0)."""
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _entry(
    per_session: dict[str, dict[str, JSON]], value: float, n: int, **extra: JSON
) -> dict[str, JSON]:
    means = [v["value"] for v in per_session.values()]
    return {
        "value": value,
        "n": n,
        "session_mean": _mean(means),
        "per_session": per_session,
        **extra,
    }


def _qa_metrics(answers: Sequence[Prediction]) -> dict[str, dict[str, JSON]]:
    # (episode, session, question-session) -> [correct, incorrect, don't know]
    counts: dict[tuple[str, int, int], list[int]] = defaultdict(lambda: [0, 0, 0])
    slot = {CORRECT: 0, INCORRECT: 1, DONT_KNOW: 2}
    for p in answers:
        key = (p.episode_id, p.session_index, answer_meta(p)["question_session"])
        counts[key][slot[require_verdict(p).label]] += 1
    episodes = list(dict.fromkeys(e for e, _, _ in counts))
    groups: dict[int, list[int]] = defaultdict(list)  # session -> its question-sessions
    for _, s, q in sorted(counts):
        if q not in groups[s]:
            groups[s].append(q)

    def table(cells: Sequence[tuple[int, int]]) -> np.ndarray:
        """Per-episode counts of ``cells`` side by side: (episodes, 3 * len(cells))."""
        return np.array(
            [[v for s, q in cells for v in counts.get((e, s, q), (0, 0, 0))] for e in episodes],
            dtype=float,
        ).reshape(len(episodes), 3 * len(cells))

    cells = [(s, q) for s, qs in sorted(groups.items()) for q in qs]
    pooled_rows = table(cells).reshape(len(episodes), len(cells), 3).sum(axis=1)
    out: dict[str, dict[str, Any]] = {}
    for metric in ("precision", "recall", "f1", "dont_know_rate"):
        pooled = Additive(tuple(episodes), pooled_rows, {"fn": "prf", "which": metric})
        per_session, per_q, parts = {}, {}, []
        for s, qs in sorted(groups.items()):
            stat = Additive(
                tuple(episodes), table([(s, q) for q in qs]), {"fn": "prf_groups", "which": metric}
            )
            asked = int(stat.matrix.sum())
            per_session[str(s)] = {"value": stat.value(), "n": asked}
            per_session[str(s)].update(ci_fields(stat, full=False))
            parts.append(stat)
            for q in qs:
                cell = Additive(tuple(episodes), table([(s, q)]), {"fn": "prf", "which": metric})
                c, i, d = (int(v) for v in cell.matrix.sum(axis=0))
                per_q[f"{s}/{q}"] = {
                    "value": cell.value(),
                    "n": c + i + d,
                    "correct": c,
                    "incorrect": i,
                    "dont_know": d,
                    **ci_fields(cell, full=False, keep=False),
                }
        out[metric] = _entry(
            per_session, pooled.value(), int(pooled_rows.sum()), per_question_session=per_q
        )
        out[metric].update(ci_fields(pooled if episodes else None))
        out[metric]["session_mean_ci95"] = _mean_ci(parts)
    return out


def _mean_ci(parts: Sequence[ClusterStatistic]) -> list[float] | None:
    """The interval of the mean over sessions (the tables' "Avg.")."""
    if not parts:
        return None
    ci: list[float] | None = ci_fields(MeanOf.of(parts), full=False, keep=False)["ci95"]
    return ci


def _retention_metrics(states: Sequence[Prediction]) -> dict[str, dict[str, JSON]]:
    by_session: dict[int, list[tuple[str, MemoryStateMeta]]] = defaultdict(list)
    for p in states:
        if "created" in (meta := memory_meta(p)):
            by_session[p.session_index].append((p.episode_id, meta))
    if not by_session:
        return {}
    out: dict[str, dict[str, Any]] = {}
    for metric in ("retained", "created", "retention_rate"):
        per_session: dict[str, dict[str, Any]] = {}
        parts = []
        for s, preds in sorted(by_session.items()):
            if metric == "retention_rate":
                rows = [(e, m["retained"] / m["created"]) for e, m in preds if m["created"]]
            else:
                rows = [
                    (e, float(m["retained" if metric == "retained" else "created"]))
                    for e, m in preds
                ]
            stat = (
                Additive.from_items([e for e, _ in rows], [[v, 1.0] for _, v in rows], RATIO)
                if rows
                else None
            )
            per_session[str(s)] = {"value": _mean([v for _, v in rows]), "n": len(rows)}
            per_session[str(s)].update(ci_fields(stat, full=False))
            parts.append(stat)
        last_key = str(max(by_session))
        last = per_session[last_key]
        out[metric] = _entry(
            per_session,
            last["value"],
            last["n"],
            aggregation="mean over episodes; value = last session",
        )
        out[metric].update(ci_fields(parts[-1]))
        present = [p for p in parts if p is not None]
        out[metric]["session_mean_ci95"] = _mean_ci(present) if len(present) == len(parts) else None
    return out


def score_qa(
    predictions: Sequence[Prediction], judge_info: Mapping[str, JSON]
) -> tuple[list[Score], JudgedSummary]:
    """Score judged answers and memory states into per-answer scores and the run summary."""
    answers = [p for p in predictions if p.kind == "answer"]
    states = [p for p in predictions if p.kind == "memory"]
    verdicts = [require_verdict(p) for p in answers]
    pairs = list(zip(answers, verdicts, strict=True))
    scores = [Score(p.pred_id, "correct", float(v.correct)) for p, v in pairs]
    scores += [Score(p.pred_id, "judge_label", float(v.label)) for p, v in pairs]
    metrics = _qa_metrics(answers)
    metrics.update(_retention_metrics(states))
    judge = {
        **dict(judge_info),
        "judged": len(verdicts),
        "parse_failures": sum(1 for v in verdicts if v.failed(PARSE_FAILURE)),
        "call_failures": sum(1 for v in verdicts if v.failed(CALL_FAILURE)),
        "labels": {str(k): sum(1 for v in verdicts if v.label == k) for k in (1, 0, 2)},
    }
    summary: JudgedSummary = {
        "metrics": metrics,
        "judge": judge,
        "answer_failures": sum(1 for p in answers if p.failure),
        "aggregation": (
            "per_session = mean over question-sessions (LUFY Table 11 from Tables 16-18), F1 "
            "from that P and R; session_mean = mean over sessions; value = pooled judgments"
        ),
    }
    return scores, summary
