"""The classic baselines' common state (THEANINE sec. 3.2; Bae et al., 2022 sec. 5.2).

``BaselineMethod``: the collaborators, the response prompt of ``prompt_style`` (defined in
``memory.blocks.prompts``) and the episode bookkeeping (observed turn ids, reset); ``render_flat``
shows their memory items one per line.
"""

from __future__ import annotations

from recallbench.embed.base import TextEmbedder
from recallbench.llm.protocol import LLMClient
from recallbench.memory._base import MemoryMethod, Message
from recallbench.memory.blocks.prompts import PromptStyle, check_prompt_style, response_messages
from recallbench.records import Episode, MemoryItem, Query, Recall, Session


def render_flat(items: list[MemoryItem] | tuple[MemoryItem, ...]) -> str:
    """Render memory items one per line, in the given order."""
    return "\n".join(item.text for item in items)


class BaselineMethod(MemoryMethod):
    """Common state of the classic baselines: collaborators, prompt style, observed turns.

    Subclasses implement ``_clear`` (drop their store), ``_write`` (take in a finished session),
    ``recall`` and ``snapshot``. ``memory_label`` names the memory block in the CareCall prompt.
    """

    memory_label = "Memory"

    def __init__(
        self, llm: LLMClient, embedder: TextEmbedder, *, prompt_style: PromptStyle = "theanine"
    ) -> None:
        self.llm = llm
        self.embedder = embedder
        self.prompt_style = check_prompt_style(prompt_style)
        self.episode_id: str | None = None
        self.speakers: tuple[str, ...] = ()
        self._observed: dict[int, tuple[str, ...]] = {}

    def reset(self, episode: Episode) -> None:
        """Start ``episode`` with an empty store."""
        super().reset(episode)
        self._observed = {}
        self._clear()

    def observe(self, session: Session) -> None:
        """Record the session's turn ids (provenance) and write it to memory."""
        self.check_episode(None)
        self._observed[session.index] = tuple(t.turn_id for t in session.turns)
        self._write(session)

    def prompt(self, query: Query, recall: Recall) -> list[Message]:
        """Return the response prompt of ``prompt_style`` filled with ``recall.text``."""
        return response_messages(self.prompt_style, recall.text, query, self.memory_label)

    def observed_ids(self, before: int | None = None) -> tuple[str, ...]:
        """Return the turn ids of observed sessions (only those with index < ``before``)."""
        return tuple(
            tid
            for index in sorted(self._observed)
            if before is None or index < before
            for tid in self._observed[index]
        )

    def _clear(self) -> None:
        """Drop the store (called by ``reset``)."""

    def _write(self, session: Session) -> None:
        """Take in a finished session."""
