"""Scores of protocol ``qa`` (LUFY Table 11, Tables 16-18, Table 3).

For session ``s`` and the questions created after session ``q`` (a "question-session"):
precision P = correct / (correct + incorrect) (0 when nothing was answered), recall R = correct /
asked, F1 = 2PR / (P + R) (0 when P + R = 0). ``per_session[s]`` is the mean over the
question-sessions q <= s (this reproduces Table 11 from Tables 16-18), F1 from that P and R;
``session_mean`` is the mean over sessions (the tables' "Avg."); ``value`` pools every judgment
of the run (micro average). Memory states (``kind="memory"`` predictions) give ``retained``,
``created`` and ``retention_rate``: means over episodes of the per-episode values per session
(Table 3); their ``value`` is the last session's.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from recallbench.judges import CORRECT, DONT_KNOW, INCORRECT
from recallbench.llm.task import CALL_FAILURE, PARSE_FAILURE
from recallbench.records import Prediction, Score

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


def _entry(per_session: dict[str, dict], value: float, n: int, **extra: Any) -> dict[str, Any]:
    means = [v["value"] for v in per_session.values()]
    return {
        "value": value,
        "n": n,
        "session_mean": _mean(means),
        "per_session": per_session,
        **extra,
    }


def _qa_metrics(answers: Sequence[Prediction]) -> dict[str, dict]:
    counts: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0, 0])
    slot = {CORRECT: 0, INCORRECT: 1, DONT_KNOW: 2}
    for p in answers:
        counts[(p.session_index, int(p.meta["question_session"]))][
            slot[p.meta["judge"]["label"]]
        ] += 1
    by_session: dict[int, list[tuple[int, list[int]]]] = defaultdict(list)
    for (s, q), c in sorted(counts.items()):
        by_session[s].append((q, c))
    out: dict[str, dict] = {
        m: {"per_session": {}, "per_question_session": {}}
        for m in ("precision", "recall", "f1", "dont_know_rate")
    }
    for s, groups in by_session.items():
        ps, rs, asked_s, dk_s = [], [], 0, 0
        for q, (c, i, d) in groups:
            p, r, f = prf(c, i, c + i + d)
            ps.append(p)
            rs.append(r)
            asked_s, dk_s = asked_s + c + i + d, dk_s + d
            key, n = f"{s}/{q}", c + i + d
            cell = {"n": n, "correct": c, "incorrect": i, "dont_know": d}
            for metric, v in (
                ("precision", p),
                ("recall", r),
                ("f1", f),
                ("dont_know_rate", d / n),
            ):
                out[metric]["per_question_session"][key] = {"value": v, **cell}
        p_s, r_s = _mean(ps), _mean(rs)
        for metric, v in (
            ("precision", p_s),
            ("recall", r_s),
            ("f1", f1(p_s, r_s)),
            ("dont_know_rate", dk_s / asked_s if asked_s else 0.0),
        ):
            out[metric]["per_session"][str(s)] = {"value": v, "n": asked_s}
    tot = [sum(c[k] for c in counts.values()) for k in range(3)]
    n = sum(tot)
    p, r, f = prf(tot[0], tot[1], n)
    pooled = {"precision": p, "recall": r, "f1": f, "dont_know_rate": tot[2] / n if n else 0.0}
    return {
        m: _entry(
            out[m]["per_session"], pooled[m], n, per_question_session=out[m]["per_question_session"]
        )
        for m in pooled
    }


def _retention_metrics(states: Sequence[Prediction]) -> dict[str, dict]:
    by_session: dict[int, list[dict]] = defaultdict(list)
    for p in states:
        if "created" in p.meta:
            by_session[p.session_index].append(p.meta)
    if not by_session:
        return {}
    out: dict[str, dict] = {}
    for metric in ("retained", "created", "retention_rate"):
        per_session = {}
        for s, metas in sorted(by_session.items()):
            if metric == "retention_rate":
                values = [m["retained"] / m["created"] for m in metas if m["created"]]
            else:
                values = [float(m[metric]) for m in metas]
            per_session[str(s)] = {"value": _mean(values), "n": len(values)}
        last = per_session[str(max(by_session))]
        out[metric] = _entry(
            per_session,
            last["value"],
            last["n"],
            aggregation="mean over episodes; value = last session",
        )
    return out


def _failed(verdict: Mapping[str, Any], kind: str) -> bool:
    return str(verdict.get("failure") or "").startswith(kind)


def score_qa(
    predictions: Sequence[Prediction], judge_info: Mapping[str, Any]
) -> tuple[list[Score], dict]:
    """Score judged answers and memory states into per-answer scores and the run summary."""
    from recallbench.metrics.stats import mean_ci

    answers = [p for p in predictions if p.kind == "answer"]
    states = [p for p in predictions if p.kind == "memory"]
    scores = [
        Score(p.pred_id, "correct", float(p.meta["judge"]["label"] == CORRECT)) for p in answers
    ]
    scores += [Score(p.pred_id, "judge_label", float(p.meta["judge"]["label"])) for p in answers]
    metrics = _qa_metrics(answers)
    if answers:
        ci = mean_ci([s.value for s in scores[: len(answers)]])
        metrics["recall"].update(mean=ci.mean, ci95=[ci.low, ci.high])
    metrics.update(_retention_metrics(states))
    verdicts = [p.meta["judge"] for p in answers]
    judge = {
        **dict(judge_info),
        "judged": len(verdicts),
        "parse_failures": sum(1 for v in verdicts if _failed(v, PARSE_FAILURE)),
        "call_failures": sum(1 for v in verdicts if _failed(v, CALL_FAILURE)),
        "labels": {str(k): sum(1 for v in verdicts if v["label"] == k) for k in (1, 0, 2)},
    }
    summary = {
        "metrics": metrics,
        "judge": judge,
        "answer_failures": sum(1 for p in answers if p.failure),
        "aggregation": (
            "per_session = mean over question-sessions (LUFY Table 11 from Tables 16-18), F1 "
            "from that P and R; session_mean = mean over sessions; value = pooled judgments"
        ),
    }
    return scores, summary
