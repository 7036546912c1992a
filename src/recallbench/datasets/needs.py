"""What a dataset provides beyond dialogue turns, and the words methods and protocols need it in.

A memory method or a protocol names the facts it needs about the data (``MemoryMethod.needs``,
``EvalProtocol.needs``); :func:`provided` reads the facts a list of episodes offers. The
cross-paper matrix (``recallbench matrix``) marks a method x dataset cell unavailable with the
facts needed and not provided, so the reason is derived from the code and the data, never a
hand-typed list of cells.

    provided(episodes)   -> frozenset({"dated sessions", "QA items", "gold persona", "session 3", ...})
    missing(needs, have) -> ("gold memory",)

The facts:

- ``dated sessions``: every session has a (simulated) start time (``Session.start``);
- ``QA items``: some episode has probing questions; ``QA answers``: some question has a gold
  answer; ``QA answer key``: some question carries an answerability label (GVD's key);
- ``gold <key>``: every episode has a session whose ``gold`` holds ``key`` (``memory``,
  ``summary``, ``persona``, ``persona_session``); ``gold summary or persona``: one of the keys a
  ``source: gold`` summary reads (``memory.blocks.gold.GOLD_SUMMARY_KEYS``);
- ``session <i>``: some episode has a session with index ``i`` (a response protocol answers
  from its first target session on).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from recallbench.records import Episode

__all__ = [
    "DATED",
    "GOLD_SUMMARY",
    "QA_ANSWERS",
    "QA_ITEMS",
    "QA_KEY",
    "gold",
    "missing",
    "provided",
    "session",
]

DATED = "dated sessions"
QA_ITEMS = "QA items"
QA_ANSWERS = "QA answers"
QA_KEY = "QA answer key"
GOLD_SUMMARY = "gold summary or persona"
GOLD_KEYS = ("memory", "summary", "persona", "persona_session")
SUMMARY_KEYS = ("summary", "persona_session", "persona")  # what gold_key: auto accepts


def gold(key: str) -> str:
    """The fact "every episode has gold ``key``" (``auto``: a summary or persona key)."""
    return GOLD_SUMMARY if key == "auto" else f"gold {key}"


def session(index: int) -> str:
    """The fact "some episode has session ``index``"."""
    return f"session {index}"


def _every_episode_has(episodes: Sequence[Episode], keys: Iterable[str]) -> bool:
    wanted = set(keys)
    return all(any(wanted & set(s.gold) for s in ep.sessions) for ep in episodes)


def provided(episodes: Sequence[Episode]) -> frozenset[str]:
    """Return the facts ``episodes`` provide (module docstring); none for no episodes."""
    if not episodes:
        return frozenset()
    facts: set[str] = set()
    sessions = [s for ep in episodes for s in ep.sessions]
    if sessions and all(s.start is not None for s in sessions):
        facts.add(DATED)
    questions = [q for ep in episodes for q in ep.qa]
    if questions:
        facts.add(QA_ITEMS)
    if any(q.answers for q in questions):
        facts.add(QA_ANSWERS)
    if any(isinstance(q.meta.get("answerable"), bool) for q in questions):
        facts.add(QA_KEY)
    facts |= {gold(k) for k in GOLD_KEYS if _every_episode_has(episodes, [k])}
    if _every_episode_has(episodes, SUMMARY_KEYS):
        facts.add(GOLD_SUMMARY)
    facts |= {session(s.index) for s in sessions}
    return frozenset(facts)


def missing(needs: Iterable[str], have: frozenset[str]) -> tuple[str, ...]:
    """The needed facts ``have`` lacks, sorted."""
    return tuple(sorted(set(needs) - have))
