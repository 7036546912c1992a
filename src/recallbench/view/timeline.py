"""Lay a run's predictions along its episodes: sessions, turns, what each turn recalled, and the
memory store after each session.

A prediction belongs to the turn whose id prefixes its id (the response protocol's
``<turn_id>/response``): it is shown at that turn, the model's output beside the real turn (the
reference). Every other prediction (a probing question's answer, a memory-operation verdict, a
TeaFarm question) is shown after its session's turns. Timing records (``kind == "timing"``) are
the session's memory-construction time. Without ``episodes/`` (runs written before the runner
kept the dialogue) a session lists only the turns its predictions quote.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from recallbench.records import (
    Episode,
    MemoryItem,
    Prediction,
    in_memory,
)
from recallbench.verdict import Verdict, verdict_of
from recallbench.view.load import RunFiles, Snapshot


@dataclass
class Entry:
    """One prediction and what the report shows beside it."""

    pred: Prediction
    scores: dict[str, float]
    recalled: list[str]  # ids as recorded (turn or item ids)
    memory: tuple[MemoryItem, ...]  # store items the recalled ids point to (sources or ids)
    problems: list[str]

    @property
    def question(self) -> str | None:
        value = self.pred.meta.get("question")
        return str(value) if value is not None else None

    @property
    def judge(self) -> Verdict | None:
        return verdict_of(self.pred)


@dataclass
class TurnView:
    turn_id: str
    speaker: str
    text: str
    entries: list[Entry] = field(default_factory=list)


@dataclass
class SessionView:
    index: int
    start: datetime | None
    turns: list[TurnView] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)  # predictions not tied to a turn
    store: tuple[MemoryItem, ...] | None = None  # the memory after this session (None: not kept)
    gone: frozenset[str] = frozenset()  # ids of ``store`` out of memory (records.in_memory)
    observe_s: float | None = None
    quoted_only: bool = False  # no dialogue file: the turns are the predictions' references


@dataclass
class EpisodeView:
    episode_id: str
    sessions: list[SessionView]
    turn_ids: frozenset[str]
    n_problems: int


def problems_of(pred: Prediction) -> list[str]:
    """What went wrong with a prediction: a failed call, an unparsed judge reply."""
    out = []
    if pred.failure:
        out.append(f"failed: {pred.failure}")
    judge = verdict_of(pred)
    if judge is not None:
        if not judge.parsed:
            out.append(f"judge reply not parsed: {judge.raw[:300]!r}")
        if judge.failure:
            out.append(f"judge failed: {judge.failure}")
    return out


def turn_anchor(pred: Prediction, turn_ids: frozenset[str] | None) -> str | None:
    """The id of the turn ``pred`` answers in place of, or None (a question, a verdict ...).

    ``turn_ids`` are the dialogue's turn ids; None when the run kept no dialogue, where a
    ``response`` with a reference is taken to stand for its turn.
    """
    anchor = pred.pred_id.rpartition("/")[0]
    if turn_ids is not None:
        return anchor if anchor in turn_ids else None
    return anchor if pred.kind == "response" and pred.reference is not None else None


def _store_before(
    snapshots: tuple[Snapshot, ...], session: int, anchored: bool
) -> tuple[MemoryItem, ...]:
    """The store a prediction of ``session`` recalled from: after the previous session for a
    turn inside the session, after the session itself for a question asked after it."""
    found: tuple[MemoryItem, ...] = ()
    for after, items in snapshots:
        if after < session or (not anchored and after == session):
            found = items
    return found


def entry_for(run: RunFiles, pred: Prediction, anchored: bool) -> Entry:
    """The prediction with its scores, the store items its recalled ids point to and problems."""
    recalled = list(pred.recalled)
    store = _store_before(run.snapshots.get(pred.episode_id, ()), pred.session_index, anchored)
    wanted = set(recalled)
    memory = tuple(m for m in store if m.item_id in wanted or wanted & set(m.source_ids))
    return Entry(pred, run.scores.get(pred.pred_id, {}), recalled, memory, problems_of(pred))


def _sessions(episode: Episode | None, preds: list[Prediction]) -> dict[int, SessionView]:
    if episode is not None:
        return {
            s.index: SessionView(
                s.index, s.start, [TurnView(t.turn_id, t.speaker, t.text) for t in s.turns]
            )
            for s in episode.sessions
        }
    out: dict[int, SessionView] = {}
    for pred in preds:
        out.setdefault(pred.session_index, SessionView(pred.session_index, None, quoted_only=True))
    return out


def episode_view(run: RunFiles, episode_id: str, preds: list[Prediction]) -> EpisodeView:
    """Lay ``preds`` (the episode's predictions, in order) along the episode's sessions."""
    episode = run.episodes.get(episode_id)
    sessions = _sessions(episode, preds)
    turns = {t.turn_id: t for s in sessions.values() for t in s.turns}
    known = frozenset(turns) if episode is not None else None
    n_problems = 0
    for pred in preds:
        session = sessions.setdefault(
            pred.session_index, SessionView(pred.session_index, None, quoted_only=True)
        )
        if pred.kind == "timing":
            seconds = pred.meta.get("observe_s")
            if isinstance(seconds, int | float):
                session.observe_s = (session.observe_s or 0.0) + float(seconds)
            continue
        anchor = turn_anchor(pred, known)
        if anchor is not None and anchor not in turns:  # no dialogue: the reference is the turn
            turns[anchor] = TurnView(
                anchor, str(pred.meta.get("speaker", "")), pred.reference or ""
            )
            session.turns.append(turns[anchor])
        entry = entry_for(run, pred, anchor is not None)
        n_problems += bool(entry.problems)
        (turns[anchor].entries if anchor is not None else session.entries).append(entry)
    decayed = run.info.config.memory.decayed_recallable
    for after, items in run.snapshots.get(episode_id, ()):
        if after in sessions:
            sessions[after].store = items
            gone = (m.item_id for m in items if not in_memory(m, decayed))
            sessions[after].gone = frozenset(gone)
    ordered = [sessions[i] for i in sorted(sessions)]
    return EpisodeView(episode_id, ordered, frozenset(turns), n_problems)


def episode_views(run: RunFiles) -> list[EpisodeView]:
    """Every episode of the run, in the order they were replayed (then those without output)."""
    order = [*(p.episode_id for p in run.predictions), *run.episodes]
    by_episode: dict[str, list[Prediction]] = {e: [] for e in order}
    for pred in run.predictions:
        by_episode[pred.episode_id].append(pred)
    return [episode_view(run, e, preds) for e, preds in by_episode.items()]
