"""Wrap another memory system (a service with add / search / list) as a recallbench method.

Zep, Letta or your own service each have a client with some form of "add these messages to a
scope", "search a scope" and "list a scope". ``ServiceMemory`` adapts any client that offers the
three calls of ``MemoryService``; ``KeywordService`` is a tiny in-process service so that the
example runs offline (replace it by your client). ``recallbench.memory.mem0`` is the full-size
case: mem0ai in-process, its LLM calls routed through recallbench's LLM layer.

In the project the adapter would live in ``src/recallbench/memory/<name>/`` with the config
``conf/memory/<name>.yaml`` (``_target_`` + the service's settings).
"""

from __future__ import annotations

from typing import Any, Protocol

from recallbench.embed import TextEmbedder
from recallbench.llm import LLMClient
from recallbench.memory import MemoryMethod, render_history
from recallbench.records import Episode, MemoryItem, Query, Recall, Session
from recallbench.text import content_words, porter_stem


def _stems(text: str) -> set[str]:
    return {porter_stem(w) for w in content_words(text)}


class MemoryService(Protocol):
    """What the adapter needs of the wrapped system's client."""

    def add(self, scope: str, messages: list[dict[str, str]], metadata: dict[str, Any]) -> str: ...
    def search(self, scope: str, query: str, top_k: int) -> list[dict[str, Any]]: ...
    def list(self, scope: str) -> list[dict[str, Any]]: ...


class KeywordService:
    """An in-process stand-in for a memory server: stores messages, ranks by shared words."""

    def __init__(self) -> None:
        self.rows: dict[str, list[dict[str, Any]]] = {}

    def add(self, scope: str, messages: list[dict[str, str]], metadata: dict[str, Any]) -> str:
        rows = self.rows.setdefault(scope, [])
        text = " ".join(m["content"] for m in messages)
        rows.append({"id": f"{scope}#{len(rows)}", "memory": text, "metadata": dict(metadata)})
        return rows[-1]["id"]

    def search(self, scope: str, query: str, top_k: int) -> list[dict[str, Any]]:
        asked = _stems(query)
        scored = [(len(asked & _stems(r["memory"])), r) for r in self.list(scope)]
        return [r for n, r in sorted(scored, key=lambda s: -s[0]) if n > 0][:top_k]

    def list(self, scope: str) -> list[dict[str, Any]]:
        return list(self.rows.get(scope, []))


class ServiceMemory(MemoryMethod):
    """Any ``MemoryService`` as a memory method: one scope per episode, sources in metadata."""

    name = "service"

    def __init__(
        self,
        llm: LLMClient,
        embedder: TextEmbedder,
        *,
        service: MemoryService | None = None,
        top_k: int = 5,
    ) -> None:
        self.llm, self.embedder, self.top_k = llm, embedder, top_k
        self.service: MemoryService = service if service is not None else KeywordService()

    def reset(self, episode: Episode) -> None:
        super().reset(episode)
        self.scope = f"{episode.episode_id}#{id(self)}"  # a fresh scope: nothing leaks in

    def observe(self, session: Session) -> None:
        self.check_episode(None)
        for turn in session.turns:  # one add per turn: each memory knows its source turn
            messages = [{"role": "user", "content": f"{turn.speaker}: {turn.text}"}]
            when = session.start.isoformat() if session.start else None  # simulated time
            self.service.add(self.scope, messages, {"turn_ids": [turn.turn_id], "date": when})

    def _item(self, row: dict[str, Any]) -> MemoryItem:
        meta = row.get("metadata") or {}
        return MemoryItem(
            item_id=str(row["id"]),  # the service's id: stable while the scope lives
            text=str(row["memory"]),
            kind="utterance",
            created=None,
            source_ids=tuple(meta.get("turn_ids") or ()),  # what recall@k and the leak test read
        )

    def recall(self, query: Query) -> Recall:
        self.check_episode(query)
        text = query.question or (query.history[-1].text if query.history else "")
        items = tuple(self._item(r) for r in self.service.search(self.scope, text, self.top_k))
        return Recall(items, "\n".join(i.text for i in items), {"method": self.name})

    def prompt(self, query: Query, recall: Recall) -> list[dict[str, str]]:
        memory = recall.text or "(nothing recalled)"
        history = render_history(query.history)
        return [{"role": "user", "content": f"Memory:\n{memory}\n\nDialogue:\n{history}\nReply:"}]

    def snapshot(self) -> list[MemoryItem]:
        return [self._item(r) for r in self.service.list(self.scope)]
