"""LongMemEval's retrieval metrics, as the authors compute them (``src/retrieval/eval_utils.py``
and ``run_retrieval.py`` of xiaowu0162/LongMemEval), from a method's ranked ids.

What is indexed (``process_item_flat_index``): at session level one document per haystack
session, id = the session id; at turn level one document per USER turn, id
``<session id>_<n>`` with ``n`` the 1-based position among ALL the session's turns. In a session
whose id contains "answer", a document without evidence is renamed "answer" -> "noans" (a
session none of whose user turns has ``has_answer``; a user turn without it). The relevant
documents are the corpus ids that contain "answer". ``corpus_of`` builds that corpus from an
episode; ``Gold`` keeps what the metrics need of it (the relevant ids and the corpus sizes), so a
prediction carries it and is scored without the episode.

Metrics at k (``evaluate_retrieval``): ``recall_any`` (any relevant id among the first k),
``recall_all`` (every relevant id among them) and ``ndcg_any`` (NDCG with binary relevance and
the authors' DCG: ``rel[0] + sum(rel[i] / log2(i + 1))`` for i >= 1, so ranks 1 and 2 are not
discounted; the ideal ranking over the whole corpus). Turn ranking to session level
(``evaluate_retrieval_turn2session``): turn ids lose their last ``_`` part, k grows until the
first k turns hold k distinct sessions (or passes the corpus size), and those metrics are
computed at that effective k against the sessions of the relevant turns.

A ranking here is the method's recalled ids in order (not a ranking of the whole corpus, which a
memory method does not produce): ids not ranked are below every ranked one, so @k equals the
authors' value whenever the method ranked at least k documents, and otherwise counts the
unranked tail as irrelevant (a retriever that stops early). Ids that are not documents of the
corpus (assistant turns) are dropped before ranking, as the authors never index them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from recallbench.records import Episode

SESSION_K = (5, 10)
TURN_K = (5, 10, 50)
MEASURES = ("recall_any", "recall_all", "ndcg_any")
NAMES = tuple(
    [f"session_{m}@{k}" for k in SESSION_K for m in MEASURES]
    + [f"turn_{m}@{k}" for k in TURN_K for m in MEASURES]
)


@dataclass(frozen=True)
class Gold:
    """What the metrics need of a question's corpus: relevant ids and corpus sizes."""

    sessions: tuple[str, ...]  # relevant session corpus ids
    turns: tuple[str, ...]  # relevant user-turn corpus ids
    n_sessions: int
    n_turns: int  # user turns indexed
    has_target: bool  # some user turn has has_answer (the authors skip questions without)

    def to_dict(self) -> dict[str, object]:
        return {
            "sessions": list(self.sessions),
            "turns": list(self.turns),
            "n_sessions": self.n_sessions,
            "n_turns": self.n_turns,
            "has_target": self.has_target,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, object]) -> Gold:
        return cls(
            tuple(str(s) for s in raw["sessions"]),  # type: ignore[attr-defined]
            tuple(str(t) for t in raw["turns"]),  # type: ignore[attr-defined]
            int(raw["n_sessions"]),  # type: ignore[call-overload]
            int(raw["n_turns"]),  # type: ignore[call-overload]
            bool(raw["has_target"]),
        )


def corpus_of(episode: Episode) -> tuple[list[str], list[str]]:
    """The session and user-turn corpus ids of ``episode``, as ``process_item_flat_index``."""
    sessions: list[str] = []
    turns: list[str] = []
    for session in episode.sessions:
        users = [t for t in session.turns if t.labels.get("role") == "user"]
        sid = str(session.turns[0].labels["lme_session"]) if session.turns else ""
        if not sid:
            continue
        found = any(t.labels.get("has_answer") is True for t in users)
        sessions.append(sid.replace("answer", "noans") if "answer" in sid and not found else sid)
        for t in users:
            tid = str(t.labels["lme_id"])
            evidence = t.labels.get("has_answer") is True
            turns.append(
                tid.replace("answer", "noans") if "answer" in sid and not evidence else tid
            )
    return sessions, turns


def gold_of(episode: Episode) -> Gold:
    """The relevant ids and corpus sizes of ``episode``'s question."""
    sessions, turns = corpus_of(episode)
    target = any(
        t.labels.get("has_answer") is True and t.labels.get("role") == "user"
        for s in episode.sessions
        for t in s.turns
    )
    return Gold(
        tuple(sorted({s for s in sessions if "answer" in s})),
        tuple(sorted({t for t in turns if "answer" in t})),
        len(sessions),
        len(turns),
        target,
    )


def as_corpus_ids(ranked: Iterable[str], relevant: Sequence[str]) -> list[str]:
    """Raw ids (as a method records them) -> corpus ids: a non-relevant id loses "answer"."""
    keep = set(relevant)
    out = [r if r in keep else r.replace("answer", "noans") for r in ranked]
    return list(dict.fromkeys(out))


def dcg(relevances: Sequence[float], k: int) -> float:
    """The authors' DCG at k: ``rel[0] + sum_{i>=1} rel[i] / log2(i + 1)``."""
    rel = list(relevances)[:k]
    if not rel:
        return 0.0
    return float(rel[0]) + sum(r / math.log2(i + 1) for i, r in enumerate(rel[1:], start=1))


def evaluate(
    ranked: Sequence[str], relevant: Sequence[str], n_relevant_in_corpus: int, k: int
) -> tuple[float, float, float]:
    """``(recall_any, recall_all, ndcg_any)`` at k (``evaluate_retrieval``)."""
    correct = set(relevant)
    top = set(ranked[:k])
    recall_any = float(any(doc in top for doc in correct))
    recall_all = float(all(doc in top for doc in correct))
    ideal = dcg([1.0] * n_relevant_in_corpus, k)
    actual = dcg([1.0 if doc in correct else 0.0 for doc in ranked[:k]], k)
    return recall_any, recall_all, (actual / ideal if ideal else 0.0)


def strip_turn_id(doc: str) -> str:
    """A turn id's session id (the authors' ``strip_turn_id``: drop the last ``_`` part)."""
    return "_".join(doc.split("_")[:-1])


def evaluate_turn2session(
    ranked_turns: Sequence[str], gold: Gold, k: int
) -> tuple[float, float, float]:
    """Session metrics from a turn ranking at the effective k (``evaluate_retrieval_turn2session``)."""
    correct = sorted({strip_turn_id(t) for t in gold.turns})
    sessions = [strip_turn_id(t) for t in ranked_turns]
    effective = k
    while effective <= gold.n_turns and len(set(sessions[:effective])) < k:
        effective += 1
    # relevance in the stripped corpus: the turns whose session is relevant = the relevant turns
    return evaluate(sessions, correct, len(gold.turns), effective)


def question_metrics(
    ranked_sessions: Sequence[str], ranked_turns: Sequence[str], granularity: str, gold: Gold
) -> dict[str, float]:
    """The question's metrics (``NAMES``): turn level and turn-to-session when ``granularity`` is
    "turn", session level from the session ranking otherwise."""
    out: dict[str, float] = {}
    if granularity == "turn":
        turns = as_corpus_ids(ranked_turns, gold.turns)
        for k in SESSION_K:
            for m, v in zip(MEASURES, evaluate_turn2session(turns, gold, k), strict=True):
                out[f"session_{m}@{k}"] = v
        for k in TURN_K:
            for m, v in zip(MEASURES, evaluate(turns, gold.turns, len(gold.turns), k), strict=True):
                out[f"turn_{m}@{k}"] = v
        return out
    sessions = as_corpus_ids(ranked_sessions, gold.sessions)
    for k in SESSION_K:
        values = evaluate(sessions, gold.sessions, len(gold.sessions), k)
        for m, v in zip(MEASURES, values, strict=True):
            out[f"session_{m}@{k}"] = v
    return out
