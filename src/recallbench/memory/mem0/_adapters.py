"""The seams between mem0ai and recallbench: its LLM and embedder, backed by ours.

mem0ai builds its LLM and embedder from provider names (``LlmFactory``, ``EmbedderFactory``);
``Mem0LLM`` and ``Mem0Embedder`` take their places on a ``mem0.Memory`` (``_store.build_memory``),
so every call mem0 makes goes through recallbench's LLM layer (the ``mem0.extract`` PromptTask:
cached, metered under its name, budgeted, structured-output-capable, with an offline twin) and
through the run's embedder (cached vectors).

mem0ai 2.2.1 writes today's wall-clock date into its extraction prompt ("## Observation Date",
"## Current Date"; its ``timestamp`` argument is "platform-only" in the open-source package).
``Mem0LLM`` replaces both with the simulated date of the session being written (``set_date``):
relative references ("yesterday") then resolve against the conversation's date, as Mem0's own
LoCoMo evaluation passes each session's date, and a rerun sends the same prompt (cache hits).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from recallbench.embed import TextEmbedder
from recallbench.llm.protocol import LLMClient
from recallbench.llm.shapes import JsonReply
from recallbench.llm.task import ParseError, PromptTask
from recallbench.text import content_words

try:  # mem0ai is a declared dependency; the import error names it if it is missing
    from mem0.embeddings.base import EmbeddingBase
    from mem0.llms.base import LLMBase
except ImportError as exc:  # pragma: no cover - exercised only without mem0ai
    raise ImportError(
        "memory=mem0 needs the mem0ai package: pip install 'mem0ai>=2.2,<2.3'"
    ) from exc

EMPTY_REPLY = '{"memory": []}'
_DATES = re.compile(r"(## (?:Observation|Current) Date\n)[^\n]*")
_NEW = re.compile(r"## New Messages\n(.*?)(?:\n## |\Z)", re.S)
MIN_WORDS = 3  # offline twin: a message with fewer content words states no fact


class _Fact(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    text: str
    attributed_to: Literal["user", "assistant"]
    linked_memory_ids: list[str]


class ExtractionReply(BaseModel):
    """Mem0's additive extraction output: ``{"memory": [{"id", "text", ...}]}``."""

    model_config = ConfigDict(extra="forbid")
    memory: list[_Fact]


def parse_extraction(reply: str) -> str:
    """Check a reply is Mem0's JSON object with a ``memory`` list; return its JSON text.

    Code fences are dropped first (mem0's ``remove_code_blocks`` does the same). Anything else
    raises ``ParseError``: the task's fallback (no memory) is then passed on, and counted.
    """
    text = re.sub(r"^```(?:json)?\s*|\s*```$", "", reply.strip())
    try:
        data = json.loads(text, strict=False)
    except json.JSONDecodeError as exc:
        raise ParseError(f"mem0 extraction reply is not JSON: {reply[:80]!r}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("memory"), list):
        raise ParseError(f"mem0 extraction reply has no 'memory' list: {reply[:80]!r}")
    return json.dumps(data, ensure_ascii=False)


def offline_extraction(user: str, **_: object) -> str:
    """Extract without an LLM: each new message of the speaker ("user") with enough words.

    The no-LLM stand-in of Mem0's extraction: the speaker's own messages (Mem0's LoCoMo recipe
    writes a speaker's turns as ``user`` messages), kept verbatim, one memory each, when they
    hold at least ``MIN_WORDS`` content words; the other speaker's messages give none (Mem0's
    custom instructions: "Extract memories only from user messages").
    """
    found = _NEW.search(user)
    facts: list[dict[str, Any]] = []
    for line in (found.group(1) if found else "").splitlines():
        role, _sep, said = line.partition(": ")
        if role == "user" and len(content_words(said)) >= MIN_WORDS:
            facts.append(
                {
                    "id": str(len(facts)),
                    "text": said.strip(),
                    "attributed_to": "user",
                    "linked_memory_ids": [],
                }
            )
    return json.dumps({"memory": facts}, ensure_ascii=False)


EXTRACT_TASK: PromptTask[str] = PromptTask(
    name="mem0.extract",
    template=(("system", "{system}"), ("user", "{user}")),
    parse=parse_extraction,
    offline=offline_extraction,
    fallback=EMPTY_REPLY,
    stage="memory",
    max_tokens=1024,
    temperature=0.0,
    source="mem0ai 2.2.1 ADDITIVE_EXTRACTION_PROMPT + generate_additive_extraction_prompt (mem0's own)",
    reply=JsonReply(ExtractionReply),
)


class Mem0LLM(LLMBase):  # mem0ai ships no type information: its bases are Any
    """mem0's LLM interface answered by recallbench's LLM layer (``EXTRACT_TASK``)."""

    def __init__(self, llm: LLMClient, task: PromptTask[str] = EXTRACT_TASK) -> None:
        super().__init__({"model": llm.model})
        self.client = llm
        self.task = task
        self.date: str | None = None

    def set_date(self, date: str | None) -> None:
        """Use ``date`` (ISO) as the Observation and Current Date of the next prompts."""
        self.date = date

    def generate_response(
        self,
        messages: list[dict[str, str]],
        response_format: object = None,  # mem0's JSON-mode request: our task has its own shape
        tools: object = None,
        tool_choice: str = "auto",
        **_: object,
    ) -> str:
        """Answer mem0's extraction messages (one system, one user) through ``llm.run``."""
        if tools:
            raise NotImplementedError("memory=mem0: mem0's tool-calling paths are not routed")
        system = "\n".join(m["content"] for m in messages if m["role"] == "system")
        user = "\n".join(m["content"] for m in messages if m["role"] != "system")
        if self.date is not None:
            user = _DATES.sub(lambda m: m.group(1) + str(self.date), user)
        result = self.client.run(self.task, system=system, user=user)
        value = result.value
        return value if isinstance(value, str) else EMPTY_REPLY


class Mem0Embedder(EmbeddingBase):
    """mem0's embedder interface answered by the run's embedder (unit vectors, cached)."""

    def __init__(self, embedder: TextEmbedder) -> None:
        super().__init__(None)
        self.embedder = embedder
        self.dims = int(embedder.encode(["dimension probe"]).shape[1])

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        """Embed one text."""
        return [float(v) for v in self.embedder.encode([str(text)])[0]]

    def embed_batch(self, texts: Sequence[str], memory_action: str = "add") -> list[list[float]]:
        """Embed several texts in one call."""
        return [[float(v) for v in row] for row in self.embedder.encode([str(t) for t in texts])]
