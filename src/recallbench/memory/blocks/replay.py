"""The queries of a logged session: the dialogue so far before every reply, as a live system saw it.

A protocol that replays logs (retrieval before every bot reply: LUFY's R1/R2 counters,
MemoryBank's recall counts) and the paper tools that measure a method on those logs build the
same queries: each turn after the first whose speaker replies gets a ``Query`` with the turns
before it, at the session's start time.
"""

from __future__ import annotations

from collections.abc import Callable

from recallbench.memory._base import MemoryMethod
from recallbench.records import Episode, Query, Recall, Session, Turn


def reply_queries(
    episode: Episode, session: Session, replies: Callable[[str], bool]
) -> list[tuple[Turn, Query]]:
    """Return ``(turn, query)`` for every turn after the first whose speaker ``replies``."""
    return [
        (
            turn,
            Query(
                episode.episode_id, session.index, session.turns[:j], turn.speaker, session.start
            ),
        )
        for j, turn in enumerate(session.turns)
        if j and replies(turn.speaker)
    ]


def replay_recalls(
    method: MemoryMethod, episode: Episode, session: Session, user: str
) -> list[Recall]:
    """Recall before every reply of a speaker other than ``user``, in order; return the recalls.

    No reply is generated (the logs hold the real ones): this only lets retrieval-driven state
    evolve as it did in the logged conversation.
    """
    queries = [q for _, q in reply_queries(episode, session, lambda speaker: speaker != user)]
    method.prefetch(queries)  # e.g. one batch of the vectors the recalls embed
    return [method.recall(query) for query in queries]
