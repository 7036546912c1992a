"""``memory=mem0``: the open-source Mem0 (mem0ai) run in-process, its models routed through ours.

Paper: Chhikara et al., "Mem0: Building Production-Ready AI Agents with Scalable Long-Term
Memory", arXiv 2504.19413 (2025). Package: ``mem0ai`` (pinned ``>=2.2,<2.3`` in pyproject; the
installed version is in every run's ``run.json`` ``versions``).

What is Mem0's (run unchanged, inside ``mem0.Memory``): fact extraction and storage, i.e.
``Memory.add(messages, infer=True)`` with its prompts (``ADDITIVE_EXTRACTION_PROMPT``), its
context gathering (the 10 most similar existing memories, the last 10 messages of the scope from
its own SQLite history), its hash de-duplication and its payloads; retrieval, i.e.
``Memory.search`` (semantic top-k over its vector store, its thresholds and scoring); its vector
store (``qdrant-client`` in local in-memory mode) and history (SQLite ``:memory:``), created
per episode: no server, nothing on disk but mem0's own settings folder (``MEM0_DIR``, a temp
folder unless set). Mem0's LoCoMo recipe (``evaluation/src/memzero/add.py`` of mem0ai/mem0):
one memory scope per speaker, the session's turns written in batches of 2 as ``"Name: text"``
messages where the scope's speaker is ``user`` and the other ``assistant``, the session's date as
metadata, the evaluation's custom instructions (``custom_instructions: locomo``); at question time
both speakers' scopes are searched (top 30 each) and shown per speaker with their dates.

What is ours: the LLM behind mem0 (``_adapters.Mem0LLM``: every call is recallbench's
``mem0.extract`` PromptTask, so cached, metered, budgeted, structured-output-capable and answered
offline by a deterministic twin), the embedder (``_adapters.Mem0Embedder``: the run's embedder),
the session date in place of the wall clock in mem0's prompt, the stable memory ids and source
turn ids of the records (``snapshot``/``recall``), and the answer (the protocol's prompt).

Deviations:
- mem0ai 2.2.1's ``add`` is Mem0's current single-pass ADD-only pipeline (one extraction call
  that may link related memories); the paper's separate update call choosing ADD / UPDATE /
  DELETE / NOOP (sec. 2.1) is no longer part of ``add`` in this version: memories are only
  added (de-duplicated by hash). This is the package's behaviour, not a choice of ours.
- Telemetry is off (``MEM0_TELEMETRY=False``, set before mem0 is imported and checked).
- Without spaCy (``mem0ai[nlp]``) and fastembed (``mem0ai[extras]``), mem0 itself turns off BM25
  keyword scoring and entity linking (it logs so): retrieval is semantic only. Not installed
  here: the spaCy model download needs the network.
- Mem0 used GPT-4o-mini and text-embedding-3-small; here the run's generator and embedder (the
  extractive twin offline keeps each speaker's own sentences of 3+ content words: a no-LLM
  baseline, not Mem0's extraction).
- mem0's tool-calling paths (graph memory, procedural memory) are not routed and refuse to run.
- Source turns (``credit``): a memory's ``source_ids`` are both turns of its write batch
  (``credit: batch``, the default: mem0 keeps only the batch's metadata), which credits it with
  a turn its text may not come from in recall@k; ``credit: source_turn`` gives it the one turn
  its text came from, by the extraction's ``attributed_to`` and then text overlap (``_credit``).
"""

from __future__ import annotations

import logging
import os
import tempfile
import warnings
from datetime import datetime
from typing import Any
from urllib.parse import quote

from recallbench.embed import TextEmbedder
from recallbench.errors import did_you_mean
from recallbench.llm.protocol import LLMClient
from recallbench.memory.blocks.baseline import BaselineMethod
from recallbench.records import MemoryItem, Query, Recall, Session, Turn

os.environ["MEM0_TELEMETRY"] = "False"  # read by mem0 at import: before the imports below
logging.getLogger("mem0").setLevel(
    logging.ERROR
)  # the missing-extras warnings repeat per call (see Deviations)
os.environ.setdefault("MEM0_DIR", os.path.join(tempfile.gettempdir(), "recallbench-mem0"))

import mem0.memory.main as _mem0_main  # noqa: E402
from mem0.configs.base import MemoryConfig  # noqa: E402
from qdrant_client import QdrantClient  # noqa: E402

from recallbench.memory.mem0._adapters import Mem0Embedder, Mem0LLM  # noqa: E402
from recallbench.memory.mem0._credit import CREDITS, credited  # noqa: E402

if _mem0_main.MEM0_TELEMETRY:  # mem0 was imported earlier with telemetry on: switch it off
    _mem0_main.MEM0_TELEMETRY = False
    import mem0.memory.telemetry as _telemetry

    _telemetry.MEM0_TELEMETRY = False

# mem0ai/mem0 evaluation/src/memzero/add.py custom_instructions (Mem0's LoCoMo runs), unchanged.
LOCOMO_INSTRUCTIONS = """
Generate personal memories that follow these guidelines:

1. Each memory should be self-contained with complete context, including:
   - The person's name, do not use "user" while creating memories
   - Personal details (career aspirations, hobbies, life circumstances)
   - Emotional states and reactions
   - Ongoing journeys or future plans
   - Specific dates when events occurred

2. Include meaningful personal narratives focusing on:
   - Identity and self-acceptance journeys
   - Family planning and parenting
   - Creative outlets and hobbies
   - Mental health and self-care activities
   - Career aspirations and education goals
   - Important life events and milestones

3. Make each memory rich with specific details rather than general statements
   - Include timeframes (exact dates when possible)
   - Name specific activities (e.g., "charity race for mental health" rather than just "exercise")
   - Include emotional context and personal growth elements

4. Extract memories only from user messages, not incorporating assistant responses

5. Format each memory as a paragraph with a clear narrative structure that captures the person's experience, challenges, and aspirations
"""  # noqa: E501
INSTRUCTIONS = {"locomo": LOCOMO_INSTRUCTIONS, "none": None}
UNUSED_KEY = "unused-mem0-calls-go-through-recallbench"  # mem0's factories want a key; never sent


def build_memory(
    llm: Mem0LLM, embedder: Mem0Embedder, collection: str, instructions: str | None
) -> _mem0_main.Memory:
    """A fresh in-process ``mem0.Memory`` whose LLM and embedder are ours."""
    dims = embedder.dims
    config = MemoryConfig(
        llm={"provider": "openai", "config": {"api_key": UNUSED_KEY, "model": "recallbench"}},
        embedder={
            "provider": "openai",
            "config": {"api_key": UNUSED_KEY, "embedding_dims": dims},
        },
        vector_store={
            "provider": "qdrant",
            "config": {
                "client": QdrantClient(location=":memory:"),
                "collection_name": collection,
                "embedding_model_dims": dims,
            },
        },
        history_db_path=":memory:",
        custom_instructions=instructions,
    )
    with warnings.catch_warnings():  # qdrant: payload indexes are a server feature (harmless)
        warnings.filterwarnings("ignore", message="Payload indexes have no effect")
        memory = _mem0_main.Memory(config)
    memory.llm = llm  # mem0 has no injection seam: replace what its factories built
    memory.embedding_model = embedder
    return memory


class Mem0Memory(BaselineMethod):
    """Mem0 (mem0ai, in-process) with Mem0's LoCoMo recipe: one scope per speaker."""

    name = "mem0"

    def __init__(
        self,
        llm: LLMClient,
        embedder: TextEmbedder,
        top_k: int = 30,
        threshold: float = 0.1,
        batch_size: int = 2,
        custom_instructions: str = "locomo",
        prompt_style: Any = "theanine",
        credit: str = "batch",
    ) -> None:
        super().__init__(llm, embedder, prompt_style=prompt_style)
        if custom_instructions not in INSTRUCTIONS:
            raise did_you_mean("mem0 custom_instructions", custom_instructions, INSTRUCTIONS)
        if credit not in CREDITS:
            raise did_you_mean("mem0 credit", credit, CREDITS)
        self.credit = credit
        self.top_k = int(top_k)
        self.threshold = float(threshold)
        self.batch_size = int(batch_size)
        self.instructions = INSTRUCTIONS[custom_instructions]
        self._llm = Mem0LLM(llm)
        self._embedder = Mem0Embedder(embedder)
        self._memory: Any = None
        self._ids: dict[str, str] = {}  # mem0's uuid -> our stable id (order of writing)
        self._turns: dict[str, Turn] = {}  # the episode's written turns (credit: source_turn)

    def _clear(self) -> None:
        if self._memory is not None:
            self._memory.close()
        self._memory = build_memory(self._llm, self._embedder, "recallbench", self.instructions)
        self._ids = {}
        self._turns = {}

    def _scope(self, speaker: str) -> str:
        """Mem0's ``user_id`` of a speaker in this episode: percent-encoded, since mem0 refuses
        an id with whitespace (LUFY's "Naive RAG" logs), and distinct ids stay distinct."""
        return quote(f"{self.episode_id}/{speaker}", safe="/:-_.")

    def _write(self, session: Session) -> None:
        """Add the session for each speaker's scope, in batches, as Mem0's LoCoMo runs did."""
        date = session.start.isoformat() if session.start else None
        self._llm.set_date(session.start.date().isoformat() if session.start else None)
        turns = session.turns
        self._turns.update((t.turn_id, t) for t in turns)
        for speaker in self.speakers:
            for i in range(0, len(turns), self.batch_size):
                batch = turns[i : i + self.batch_size]
                messages = [
                    {
                        "role": "user" if t.speaker == speaker else "assistant",
                        "content": f"{t.speaker}: {t.text}",
                    }
                    for t in batch
                ]
                meta: dict[str, Any] = {"timestamp": date, "session": session.index}
                meta["turn_ids"] = [t.turn_id for t in batch]
                added = self._memory.add(messages, user_id=self._scope(speaker), metadata=meta)
                for row in added.get("results", []):
                    if row.get("id") and row["id"] not in self._ids:
                        self._ids[row["id"]] = f"{self.episode_id}/mem0/{len(self._ids)}"
        self._llm.set_date(None)

    def _item(self, row: dict[str, Any], speaker: str) -> MemoryItem:
        meta = row.get("metadata") or {}
        stamp = meta.get("timestamp")
        batch = tuple(meta.get("turn_ids") or ())
        attrs: dict[str, Any] = {"speaker": speaker, "session": meta.get("session")}
        if row.get("score") is not None:
            attrs["score"] = float(row["score"])
        sources = batch
        if self.credit == "source_turn":  # the one turn the text came from (_credit)
            sources = credited(row, batch, self._turns, speaker)
            attrs |= {"batch_turn_ids": list(batch), "attributed_to": row.get("attributed_to")}
        return MemoryItem(
            item_id=self._ids.get(str(row["id"]), f"{self.episode_id}/mem0/{row['id']}"),
            text=f"{stamp}: {row['memory']}" if stamp else str(row["memory"]),
            kind="fact",
            created=datetime.fromisoformat(stamp) if stamp else None,
            source_ids=sources,
            attrs=attrs,
        )

    def recall(self, query: Query) -> Recall:
        """Search both speakers' scopes (Mem0's ``search``, top ``top_k`` each)."""
        self.check_episode(query)
        text = query.question or "\n".join(t.text for t in query.history[-1:]) or " "
        blocks: list[str] = []
        items: list[MemoryItem] = []
        for speaker in self.speakers:
            scope = {"user_id": self._scope(speaker)}
            found = self._memory.search(
                text, filters=scope, top_k=self.top_k, threshold=self.threshold
            )
            rows = [self._item(r, speaker) for r in found.get("results", [])]
            items.extend(rows)
            lines = "\n".join(i.text for i in rows)
            blocks.append(f"Memories for user {speaker}:\n\n{lines}")
        items.sort(key=lambda i: -float(i.attrs.get("score", 0.0)))  # stable: ties keep order
        return Recall(tuple(items), "\n\n".join(blocks), {"method": "mem0"})

    def snapshot(self) -> list[MemoryItem]:
        """Every memory of both scopes, in writing order."""
        self.check_episode(None)
        items: list[MemoryItem] = []
        for speaker in self.speakers:
            found = self._memory.get_all(filters={"user_id": self._scope(speaker)}, top_k=100000)
            items.extend(self._item(r, speaker) for r in found.get("results", []))
        order = {v: k for k, v in enumerate(self._ids.values())}
        return sorted(items, key=lambda i: (order.get(i.item_id, len(order)), i.item_id))
