"""The MemoryMethod contract (DESIGN.md section 3).

A memory method is reset at the start of every episode, observes each finished session, and
recalls for a ``Query`` that carries only the past. It never sees references, answers or future
sessions. ``snapshot`` returns the store, dumped by the runner after every session.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from recallbench.records import Episode, MemoryItem, Query, Recall, Session, Turn

Message = dict[str, str]

# THEANINE Fig. 24 is the default response prompt of the THEANINE baselines; methods override
# ``prompt`` with their own paper template.


def render_history(turns: tuple[Turn, ...] | list[Turn]) -> str:
    """Render dialogue turns as ``speaker: text`` lines."""
    return "\n".join(f"{t.speaker}: {t.text}" for t in turns)


class MemoryMethod(ABC):
    """Base class of every memory method. Subclasses keep all state in instance attributes."""

    name: str = "memory"

    def reset(self, episode: Episode) -> None:
        """Start a new episode: drop every piece of state. Keep the episode's static meta only."""
        self.episode_id = episode.episode_id
        self.speakers = episode.speakers
        self._meta = dict(episode.meta)

    @abstractmethod
    def observe(self, session: Session) -> None:
        """Take in a finished session: summarize, write, link, update, forget."""

    @abstractmethod
    def recall(self, query: Query) -> Recall:
        """Return what the generator should see for ``query`` (may update counters)."""

    @abstractmethod
    def prompt(self, query: Query, recall: Recall) -> list[Message]:
        """Return the method's response prompt as chat messages."""

    @abstractmethod
    def snapshot(self) -> list[MemoryItem]:
        """Return the current store."""
