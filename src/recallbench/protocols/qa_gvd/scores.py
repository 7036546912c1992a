"""Scores of protocol ``qa_gvd``: CAIM Table 3 (four metrics) and Table 4 (LTM storage).

Per answer prediction, ``meta["caim"]`` holds one verdict per CAIM metric (score 0 / 0.5 / 1
or None = unavailable / not applicable, see ``recallbench.judges.caim``), read with
``judges.caim.caim_verdicts``; a failed judge call or parse counts in ``judge_failures``. A
metric's ``value`` is the mean over the questions where it is available (``n``), with an
episode-clustered bootstrap 95% CI (``metrics.bootstrap``: questions nest in the 15 users),
``n_unavailable`` and ``per_session``; the paper reports these means as percentages. Table 4:
``ltm_entries`` and ``ltm_words`` are the store's entries and whitespace words after the last
session, summed over episodes (the paper: "across the 15 users"), ``words_per_entry`` their
ratio.

``rescore_answers(predictions, episodes, stores, judge, where)`` scores a finished run's answers
with another (built) CAIM judge (the recalled items are in the predictions; the caller reads the
stores and the episodes of the run's dataset through ``run.read``): the raters of the agreement
study (Table 2).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from recallbench.judges.caim import (
    CAIM_METRICS,
    CaimItem,
    CaimJudge,
    CaimVerdicts,
    caim_verdicts,
)
from recallbench.metrics.bootstrap import Additive, ci_fields
from recallbench.records import JSON, Episode, MemoryItem, Prediction, QAItem, Score

RATIO = {"fn": "ratio"}
STORAGE_METRICS = ("ltm_entries", "ltm_words", "words_per_entry")
GVD_METRICS = (*CAIM_METRICS, *STORAGE_METRICS)
UNANSWERABLE_REFERENCE = "The conversations do not contain the answer (unanswerable question)."


def reference_text(episode: Episode | None, qa: QAItem) -> str:
    """Return what an LLM judge reads as the reference: the key, else the user's history."""
    turns = {t.turn_id: (s, t) for s in (episode.sessions if episode else ()) for t in s.turns}
    if qa.meta.get("answerable") is False:
        return UNANSWERABLE_REFERENCE
    if qa.answers:
        lines = [f"Answer key: {' / '.join(qa.answers)}"]
        for tid in qa.evidence:
            if tid in turns:
                s, t = turns[tid]
                day = s.start.date().isoformat() if s.start else f"session {s.index}"
                lines.append(f"Evidence [{day}] {t.speaker}: {t.text}")
        return "\n".join(lines)
    history = [
        f"[{s.start.date().isoformat() if s.start else s.index}] {t.speaker}: {t.text}"
        for s, t in turns.values()
    ]
    return "No answer key. The conversation history:\n" + "\n".join(history)


def caim_item(
    episode: Episode | None,
    qa: QAItem,
    response: str,
    recalled: Sequence[MemoryItem],
    store: Sequence[MemoryItem],
) -> CaimItem:
    """Build the judge's view of one answered question."""
    answerable = qa.meta.get("answerable")
    return CaimItem(
        question=qa.question,
        response=response,
        answers=tuple(qa.answers),
        keywords=tuple(qa.meta.get("keywords") or ()),
        answerable=answerable if isinstance(answerable, bool) else None,
        evidence=tuple(qa.evidence),
        reference=reference_text(episode, qa),
        recalled=tuple(recalled),
        store=tuple(store),
    )


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _metric_entry(rows: list[tuple[str, int, float | None]]) -> dict[str, JSON]:
    """Entry of one CAIM metric from (episode, session, score or None) rows."""
    scored = [(e, s, v) for e, s, v in rows if v is not None]
    values = [v for _, _, v in scored]
    by_session: dict[int, list[tuple[str, float]]] = defaultdict(list)
    for e, s, v in scored:
        by_session[s].append((e, v))
    per_session = {}
    for s, pairs in sorted(by_session.items()):
        per_session[str(s)] = {"value": _mean([v for _, v in pairs]), "n": len(pairs)}
        per_session[str(s)].update(ci_fields(_mean_stat(pairs), full=False))
    entry: dict[str, Any] = {
        "value": _mean(values),
        "n": len(values),
        "n_unavailable": len(rows) - len(values),
        "per_session": per_session,
    }
    entry.update(ci_fields(_mean_stat([(e, v) for e, _, v in scored])))
    if not values:
        entry["note"] = "unavailable with this judge (e.g. coherence offline)"
    return entry


def _mean_stat(pairs: Sequence[tuple[str, float]]) -> Additive | None:
    """The mean of (episode, value) pairs as a function of the episodes (None: no pairs)."""
    if not pairs:
        return None
    return Additive.from_items([e for e, _ in pairs], [[v, 1.0] for _, v in pairs], RATIO)


def storage_stats(states: Sequence[Prediction]) -> dict[str, dict[str, JSON]]:
    """Table 4: entries and words of each episode's store after its last session, summed."""
    last: dict[str, Prediction] = {}
    for p in states:
        if p.kind == "memory" and (
            p.episode_id not in last or p.session_index > last[p.episode_id].session_index
        ):
            last[p.episode_id] = p
    if not last:
        return {}
    ids = list(last)
    rows = [
        [float(last[e].meta.get("n_items", 0)), float(last[e].meta.get("n_words", 0))] for e in ids
    ]
    entries, words = (int(sum(r[k] for r in rows)) for k in (0, 1))
    n = len(last)
    note = "sum over episodes of the store after the last session"
    total = {"fn": "total"}
    return {
        "ltm_entries": {
            "value": entries,
            "n": n,
            "per_episode_mean": entries / n,
            "aggregation": note,
            **ci_fields(Additive.from_items(ids, [[r[0]] for r in rows], total)),
        },
        "ltm_words": {
            "value": words,
            "n": n,
            "per_episode_mean": words / n,
            "aggregation": note,
            **ci_fields(Additive.from_items(ids, [[r[1]] for r in rows], total)),
        },
        "words_per_entry": {
            "value": words / entries if entries else 0.0,
            "n": n,
            **ci_fields(Additive.from_items(ids, [[r[1], r[0]] for r in rows], RATIO)),
        },
    }


def score_caim(predictions: Sequence[Prediction]) -> tuple[list[Score], dict[str, dict[str, JSON]]]:
    """Return per-answer CAIM scores and the summary entries of the four metrics and Table 4."""
    read = [(p, caim_verdicts(p)) for p in predictions if p.kind == "answer"]
    verdicts = {p.pred_id: v for p, v in read if v is not None}
    answers = [p for p, v in read if v is not None]
    scores, metrics = verdict_scores(answers, verdicts)
    metrics.update(storage_stats(predictions))
    return scores, metrics


def verdict_scores(
    answers: Sequence[Prediction], verdicts: Mapping[str, CaimVerdicts]
) -> tuple[list[Score], dict[str, dict[str, JSON]]]:
    """Aggregate CAIM verdicts (keyed by pred_id) of ``answers`` into scores and metric entries."""
    scores, metrics = [], {}
    for metric in CAIM_METRICS:
        rows = [(p.episode_id, p.session_index, verdicts[p.pred_id].score(metric)) for p in answers]
        scores += [
            Score(p.pred_id, metric, v)
            for p, (_, _, v) in zip(answers, rows, strict=True)
            if v is not None
        ]
        metrics[metric] = _metric_entry(rows)
    failures = sum(len(v.failures) for v in verdicts.values())
    for metric in CAIM_METRICS:
        metrics[metric]["judge_failures"] = sum(
            metric in verdicts[p.pred_id].failures for p in answers
        )
    if answers:
        metrics["retrieval_accuracy"]["all_judge_failures"] = failures
    return scores, metrics


def _memory_item(d: Mapping[str, JSON]) -> MemoryItem:
    created = d.get("created")
    return MemoryItem(
        str(d["item_id"]),
        str(d["text"]),
        str(d.get("kind", "")),
        datetime.fromisoformat(created) if isinstance(created, str) else None,
        tuple(d.get("source_ids") or ()),
    )


Stores = Mapping[tuple[str, int], Sequence[MemoryItem]]  # (episode id, after session) -> store


def rescore_answers(
    predictions: Sequence[Prediction],
    episodes: Mapping[str, Episode],
    stores: Stores,
    judge: CaimJudge,
    where: str,
) -> tuple[list[Prediction], dict[str, CaimVerdicts]]:
    """Score the answers of a finished ``qa_gvd`` run with ``judge`` (a built CAIM judge).

    The caller reads the run folder (``run.read.RunRecord``: its predictions, the episodes of
    its dataset, its stores); ``where`` names the run in errors.
    """
    answers = [p for p in predictions if p.kind == "answer"]
    missing = [p.pred_id for p in answers if "recalled_items" not in p.meta]
    if missing:
        raise ValueError(
            f"{where}: {len(missing)} answers lack meta.recalled_items "
            f"(first: {missing[0]}); rescoring needs a run of protocol qa_gvd"
        )
    items = []
    for p in answers:
        episode = episodes.get(p.episode_id)
        qa = next((q for q in (episode.qa if episode else ()) if q.qa_id == p.meta["qa_id"]), None)
        if qa is None:
            raise ValueError(f"{where}: question {p.meta['qa_id']} not in the run's dataset")
        store = stores.get((p.episode_id, p.session_index))
        if store is None:
            raise ValueError(
                f"{where}/memory: no store of {p.episode_id} after session {p.session_index}"
            )
        recalled = [_memory_item(d) for d in p.meta["recalled_items"]]
        items.append(caim_item(episode, qa, p.output, recalled, store))
    verdicts = judge.judge_many(items)
    return answers, {p.pred_id: v for p, v in zip(answers, verdicts, strict=True)}
