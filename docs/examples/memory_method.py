"""A new memory method: keep the last ``n`` turns of every past session.

In the project this class would live in ``src/recallbench/memory/last_turns/`` (``_last_turns.py``
and an ``__init__`` that re-exports ``LastTurns``) with the config
``conf/memory/last_turns.yaml`` (``_target_: recallbench.memory.last_turns.LastTurns``, ``n: 2``).
"""

from __future__ import annotations

from recallbench.embed import TextEmbedder
from recallbench.llm import LLMClient
from recallbench.memory import MemoryMethod, render_history
from recallbench.records import Episode, MemoryItem, Query, Recall, Session


class LastTurns(MemoryMethod):
    """The last ``n`` turns of each finished session, recalled whole."""

    name = "last_turns"

    def __init__(self, llm: LLMClient, embedder: TextEmbedder, *, n: int = 2) -> None:
        if n < 1:
            raise ValueError(f"last_turns: n must be >= 1, got {n}")
        self.llm, self.embedder, self.n = llm, embedder, n

    def reset(self, episode: Episode) -> None:
        super().reset(episode)  # records the episode id; check_episode refuses other episodes
        self.items: list[MemoryItem] = []

    def observe(self, session: Session) -> None:
        for turn in session.turns[-self.n :]:
            text = f"{turn.speaker}: {turn.text}"
            self.items.append(
                MemoryItem(turn.turn_id, text, "turn", session.start, (turn.turn_id,))
            )

    def recall(self, query: Query) -> Recall:
        self.check_episode(query)
        text = "\n".join(item.text for item in self.items)
        return Recall(tuple(self.items), text, {"method": self.name})

    def prompt(self, query: Query, recall: Recall) -> list[dict[str, str]]:
        memory = recall.text or "(none)"
        return [
            {"role": "system", "content": f"You remember:\n{memory}"},
            {"role": "user", "content": render_history(query.history)},
        ]

    def snapshot(self) -> list[MemoryItem]:
        return list(self.items)
