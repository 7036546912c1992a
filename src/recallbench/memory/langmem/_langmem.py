"""``memory=langmem``: LangChain's LangMem memory manager in-process on LangGraph's in-memory store.

Package: ``langmem`` (pinned 0.0.30 in pyproject; LangChain, 2025; not yet among the
``versions`` run.json records: adding it would change every recorded run's reuse key). No paper: LangMem is a library; the Mem0 paper
(Chhikara et al., arXiv 2504.19413, Table 1) reports it on LoCoMo.

What is LangMem's (run unchanged): ``create_memory_store_manager``: for each write, the search
of related memories in the store (its dilated windows over the new messages, no LLM), the
extraction with its own instructions (``_MEMORY_INSTRUCTIONS``) through trustcall, which may
insert new memories and patch existing ones (the ``Memory`` schema: one free-text ``content``),
and the writes to the store; LangGraph's ``InMemoryStore`` with a vector index, its search.

Mem0's LoCoMo run of LangMem (mem0ai/mem0 ``evaluation/src/langmem.py``), the default here:
one store per speaker (here one namespace per speaker in one store); every message is written
on its own, as ``"<timestamp> | Speaker: text"``, to its speaker's store only; at question time
both speakers' memories are searched with the question (LangGraph's default limit: 10 each,
``top_k``) and shown per speaker.

What is ours: the chat model behind LangMem (``_adapters.LangMemChat``: every call is the
PromptTask ``langmem.extract``, cached, metered, budgeted, answered offline by a twin), the
store's embedder (the run's embedder), the stable item ids and source turn ids, and the answer.

Deviations:
- Mem0's run gave each message to a LangGraph ReAct agent holding LangMem's manage/search
  memory tools (the agent decided whether to write), and answered each question by asking
  that agent (its reply, not the memories, went to the reader). Here the memory manager
  (``create_memory_store_manager``, LangMem's documented background extraction) writes every
  message, and the searched memories go to the protocol's reader like every other method's.
- No native tool calling: the bound tools' schemas travel in the prompt and the reply is a JSON
  object of tool calls (``_adapters``).
- ``batch: session`` writes a speaker's turns of a whole session in one manager call instead of
  one call per message (fewer calls, more context per call).
- Mem0's run used OpenAI's text-embedding-3-small (1536 dimensions); here the run's embedder.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from recallbench.embed import TextEmbedder
from recallbench.errors import UserError, did_you_mean
from recallbench.llm.protocol import LLMClient
from recallbench.memory.blocks.baseline import BaselineMethod
from recallbench.records import MemoryItem, Query, Recall, Session, Turn

try:
    from langgraph.store.memory import InMemoryStore
    from langmem import create_memory_store_manager
except ImportError as exc:  # pragma: no cover - exercised only without langmem
    raise ImportError(
        "memory=langmem needs langmem: pip install 'langmem==0.0.30' (or make install)"
    ) from exc

from recallbench.memory.langmem._adapters import make_chat, store_embedder  # noqa: E402

BATCHES = ("message", "session")


class LangMemFailed(UserError, RuntimeError):
    """LangMem or its store raised while writing or searching; names episode and session."""


def _content(value: dict[str, Any]) -> str:
    content = value.get("content")
    if isinstance(content, dict):
        return str(content.get("content", content))
    return str(content)


class LangMemMemory(BaselineMethod):
    """LangMem's memory store manager with Mem0's LoCoMo recipe: one namespace per speaker."""

    name = "langmem"

    def __init__(
        self,
        llm: LLMClient,
        embedder: TextEmbedder,
        top_k: int = 10,
        batch: str = "message",
        query_limit: int = 5,
        enable_deletes: bool = False,
        prompt_style: Any = "theanine",
    ) -> None:
        super().__init__(llm, embedder, prompt_style=prompt_style)
        if batch not in BATCHES:
            raise did_you_mean("langmem batch", batch, BATCHES)
        self.top_k = int(top_k)
        self.batch = batch
        self.query_limit = int(query_limit)
        self.enable_deletes = bool(enable_deletes)
        self._chat = make_chat(llm)
        self._store: Any = None
        self._manager: Any = None
        self._ids: dict[str, str] = {}  # the store's key -> our stable id
        self._sources: dict[str, tuple[str, ...]] = {}  # key -> turn ids it was written from
        self._dates: dict[str, datetime | None] = {}

    def _clear(self) -> None:
        self._store = InMemoryStore(
            index={"dims": int(self.embedder.dim), "embed": store_embedder(self.embedder)}
        )
        self._manager = create_memory_store_manager(
            self._chat,
            namespace=("memories", "{langgraph_user_id}"),
            store=self._store,
            query_limit=self.query_limit,
            enable_deletes=self.enable_deletes,
        )
        self._ids, self._sources, self._dates = {}, {}, {}

    def _scope(self, speaker: str) -> str:
        return f"{self.episode_id}/{speaker}"

    def _write(self, session: Session) -> None:
        """Write each speaker's turns to that speaker's namespace, message by message."""
        stamp = session.start.isoformat(sep=" ") if session.start else "date unknown"
        for speaker in self.speakers:
            own = [t for t in session.turns if t.speaker == speaker]
            groups = [[t] for t in own] if self.batch == "message" else ([own] if own else [])
            for group in groups:
                self._add(group, speaker, stamp, session)

    def _add(self, turns: list[Turn], speaker: str, stamp: str, session: Session) -> None:
        messages = [{"role": "user", "content": f"{stamp} | {t.speaker}: {t.text}"} for t in turns]
        config = {"configurable": {"langgraph_user_id": self._scope(speaker)}}
        try:
            puts = self._manager.invoke({"messages": messages}, config=config)
        except Exception as exc:  # a LangMem or store failure: one line, where it happened
            raise LangMemFailed(
                f"memory=langmem: episode {self.episode_id} session {session.index} "
                f"(turn {turns[0].turn_id}): {type(exc).__name__}: {exc}".splitlines()[0]
            ) from exc
        turn_ids = tuple(t.turn_id for t in turns)
        for put in puts:
            key = str(put["key"])
            if key not in self._ids:
                self._ids[key] = f"{self.episode_id}/langmem/{len(self._ids)}"
                self._dates[key] = session.start
            self._sources[key] = tuple(dict.fromkeys(self._sources.get(key, ()) + turn_ids))

    def _item(self, row: Any, speaker: str) -> MemoryItem:
        attrs: dict[str, Any] = {"speaker": speaker}
        if getattr(row, "score", None) is not None:
            attrs["score"] = float(row.score)
        return MemoryItem(
            item_id=self._ids.get(row.key, f"{self.episode_id}/langmem/{row.key}"),
            text=_content(row.value),
            kind="fact",
            created=self._dates.get(row.key),
            source_ids=self._sources.get(row.key, ()),
            attrs=attrs,
        )

    def recall(self, query: Query) -> Recall:
        """Search both speakers' namespaces with the question (top ``top_k`` each)."""
        self.check_episode(query)
        text = query.question or "\n".join(t.text for t in query.history[-1:]) or " "
        blocks: list[str] = []
        items: list[MemoryItem] = []
        for speaker in self.speakers:
            found = self._store.search(
                ("memories", self._scope(speaker)), query=text, limit=self.top_k
            )
            rows = [self._item(r, speaker) for r in found]
            items.extend(rows)
            lines = "\n".join(i.text for i in rows)
            blocks.append(f"Memories for user {speaker}:\n\n{lines}")
        items.sort(key=lambda i: -float(i.attrs.get("score", 0.0)))  # stable: ties keep order
        return Recall(tuple(items), "\n\n".join(blocks), {"method": "langmem"})

    def snapshot(self) -> list[MemoryItem]:
        """Every memory of both namespaces, in writing order."""
        self.check_episode(None)
        items: list[MemoryItem] = []
        for speaker in self.speakers:
            found = self._store.search(("memories", self._scope(speaker)), limit=1_000_000)
            items.extend(self._item(r, speaker) for r in found)
        order = {v: k for k, v in enumerate(self._ids.values())}
        return sorted(items, key=lambda i: (order.get(i.item_id, len(order)), i.item_id))
