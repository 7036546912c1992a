"""The seams between LangMem and recallbench: its chat model and its store's embedder, backed by ours.

LangMem's memory manager (``create_memory_store_manager``) extracts memories with trustcall,
which binds tools (the ``Memory`` schema, and ``PatchDoc`` / ``RemoveDoc`` when memories
exist) on any LangChain ``BaseChatModel`` and reads the tool calls of its reply.
``LangMemChat`` is that chat model: every call is the PromptTask ``langmem.extract`` of
recallbench's LLM layer (cached, metered, budgeted, answered offline by ``offline_tool_calls``).

Our LLM layer has no native function calling, so the bound tools travel in the prompt:
LangMem's messages are sent unchanged, followed by one user message (``TOOLS_PROMPT``) listing
the tools' JSON schemas and asking for ``{"tool_calls": [{"name": ..., "args": {...}}]}``,
which is parsed back into the ``AIMessage.tool_calls`` trustcall reads (a deviation: LangMem's
published runs used OpenAI's native tool calling).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any

from recallbench.embed import TextEmbedder
from recallbench.llm.protocol import LLMClient
from recallbench.llm.task import ParseError, PromptTask
from recallbench.text import content_words

try:
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.utils.function_calling import convert_to_openai_tool
except ImportError as exc:  # pragma: no cover - exercised only without langmem
    raise ImportError(
        "memory=langmem needs langmem: pip install 'langmem==0.0.30' (or make install)"
    ) from exc

MIN_WORDS = 3  # offline twin: a message with fewer content words states no memory
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")
_CONVERSATION = re.compile(r"<conversation>(.*?)</conversation>", re.S)
_SESSION = re.compile(r"<(session_[^>\s]+)>\n(.*?)\n</\1>", re.S)
_LINE = re.compile(r"^(?:[^|\n]+ \| )?([^:|\n]{1,40}): (.+)$")
# a uuid4, with dashes (store keys, session blocks) or as 32 hex digits (trustcall's instance ids)
_UUID = re.compile(
    r"(?<![0-9a-f])[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}(?![0-9a-f])"
)

# Ours: how the bound tools are asked for without native function calling (see module docstring).
TOOLS_PROMPT = """You can call these tools (JSON schemas):
{tools}

{choice}Reply with only a JSON object: {{"tool_calls": [{{"name": "<tool name>", "args": {{...}}}}]}}."""
CHOICE = {
    "any": "Call at least one tool. ",
    "required": "Call at least one tool. ",
    "auto": "",
    "none": "Call no tool. ",
}


def parse_tool_calls(reply: str) -> str:
    """Check a reply is ``{"tool_calls": [{"name", "args"}]}``; return it as JSON text."""
    text = _FENCE.sub("", reply.strip())
    try:
        data = json.loads(text, strict=False)
    except json.JSONDecodeError as exc:
        raise ParseError(f"langmem reply is not JSON: {reply[:80]!r}") from exc
    calls = data.get("tool_calls") if isinstance(data, dict) else None
    if not isinstance(calls, list) or not all(
        isinstance(c, dict) and isinstance(c.get("name"), str) and isinstance(c.get("args"), dict)
        for c in calls
    ):
        raise ParseError(
            f"langmem reply has no 'tool_calls' list of {{name, args}}: {reply[:80]!r}"
        )
    return json.dumps({"tool_calls": calls}, ensure_ascii=False)


def offline_tool_calls(messages: str, tools: str, **_: object) -> str:
    """Extract without an LLM: one ``Memory`` per conversation line saying something.

    The no-LLM stand-in of LangMem's extraction: each line of the conversation (as LangMem
    renders it, ``"<date> | Speaker: text"`` in our recipe) with at least ``MIN_WORDS``
    content words becomes one new memory, kept verbatim with its date. Existing memories are
    neither patched nor removed. A tool list without ``Memory`` gets no call.
    """
    names = {t["function"]["name"] for t in json.loads(tools)}
    if "Memory" not in names:
        return json.dumps({"tool_calls": []})
    blocks = [m.group(2) for m in _SESSION.finditer(messages)]
    blocks = blocks or [m.group(1) for m in _CONVERSATION.finditer(messages)]
    lines = blocks[-1].splitlines() if blocks else []
    calls = []
    for line in lines:
        said = _LINE.match(line.strip())
        if said and len(content_words(said.group(2))) >= MIN_WORDS:
            calls.append({"name": "Memory", "args": {"content": line.strip()}})
    return json.dumps({"tool_calls": calls}, ensure_ascii=False)


EXTRACT_TASK: PromptTask[str] = PromptTask(
    name="langmem.extract",
    template=(("system", "{system}"), ("user", "{user}")),
    parse=parse_tool_calls,
    offline=offline_tool_calls,
    fallback='{"tool_calls": []}',
    stage="memory",
    max_tokens=2048,
    temperature=0.0,
    source="langmem 0.0.30 memory manager (trustcall) messages, unchanged, + TOOLS_PROMPT (ours)",
)


def stable_ids(text: str, ids: dict[str, str]) -> str:
    """``text`` with every UUID replaced by ``id-<n>`` (n: order of first appearance in ``ids``).

    LangMem and trustcall name each write's session block, each stored memory and each existing
    instance shown to the model by a fresh ``uuid4``: sent
    as they are, no two runs would send the same prompt, so no reply would ever be served from
    the cache. The model sees ``id-0``, ``id-1`` ...; ``restore_ids`` maps its reply back.
    """
    return _UUID.sub(lambda m: ids.setdefault(m.group(0), f"id-{len(ids)}"), text)


def restore_ids(value: Any, ids: dict[str, str]) -> Any:
    """``value`` (a reply's tool-call args) with each ``id-<n>`` of ``ids`` back as its UUID."""
    back = {v: k for k, v in ids.items()}
    if isinstance(value, str):
        return back.get(value, value)
    if isinstance(value, list):
        return [restore_ids(v, ids) for v in value]
    if isinstance(value, dict):
        return {k: restore_ids(v, ids) for k, v in value.items()}
    return value


def _role(message: BaseMessage) -> str:
    return {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}.get(
        message.type, message.type
    )


def _text(message: BaseMessage) -> str:
    content = message.content
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    calls = getattr(message, "tool_calls", None)
    if calls:
        text += "\n" + json.dumps({"tool_calls": calls}, ensure_ascii=False, default=str)
    return text


class LangMemChat(BaseChatModel):
    """A LangChain chat model answered by recallbench's LLM layer (``langmem.extract``)."""

    client: Any  # recallbench's LLMClient (pydantic field: BaseChatModel is a pydantic model)
    task: Any = EXTRACT_TASK

    @property
    def _llm_type(self) -> str:
        return "recallbench"

    def bind_tools(
        self, tools: Sequence[Any], *, tool_choice: str | None = None, **kwargs: Any
    ) -> Any:
        """Bind tools as OpenAI tool schemas (what trustcall asks of a chat model)."""
        schemas = [convert_to_openai_tool(t) for t in tools]
        return self.bind(tools=schemas, tool_choice=tool_choice, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        tools = kwargs.get("tools") or []
        choice = kwargs.get("tool_choice")
        if isinstance(choice, dict):  # a named tool: call it
            choice = "any"
        ids: dict[str, str] = {}
        system = "\n\n".join(_text(m) for m in messages if _role(m) == "system")
        chat = "\n\n".join(f"{_role(m)}: {_text(m)}" for m in messages if _role(m) != "system")
        system, chat = stable_ids(system, ids), stable_ids(chat, ids)
        schemas = stable_ids(json.dumps(tools, ensure_ascii=False), ids)  # PatchDoc names ids
        asked = TOOLS_PROMPT.format(tools=schemas, choice=CHOICE.get(str(choice), ""))
        result = self.client.run(
            self.task, system=system, user=f"{chat}\n\n{asked}", messages=chat, tools=schemas
        )
        calls = json.loads(str(result.value))["tool_calls"]
        message = AIMessage(
            content="",
            tool_calls=[
                {
                    "name": c["name"],
                    "args": restore_ids(c["args"], ids),
                    "id": f"call_{i}",
                    "type": "tool_call",
                }
                for i, c in enumerate(calls)
            ],
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


def store_embedder(embedder: TextEmbedder) -> Callable[[Sequence[str]], list[list[float]]]:
    """LangGraph's ``InMemoryStore(index={"embed": ...})`` function onto the run's embedder.

    LangGraph calls it from several threads at once (one per store operation), and MiniLM
    runs one forward pass at a time behind its own lock. The meter times each thread's
    ``encode`` and adds threads up, so a call waiting inside ``encode`` for another's pass
    was timed as embedding: LangMem's oracle run recorded 13,295 embedding seconds in a
    5,916 s run. One call at a time enters ``encode`` here, so the wait happens before the
    timer starts; the model ran one pass at a time before too, so nothing is slower. MiniLM
    now also times the wait for its lock apart (``embedder_wait``, ``embed/minilm.py``), which
    covers ``workers`` > 1 too; this gate stays, at no cost, for LangGraph's threads.
    """
    gate = threading.Lock()

    def embed(texts: Sequence[str]) -> list[list[float]]:
        with gate:
            vectors = embedder.encode([str(t) for t in texts])
        return [[float(v) for v in row] for row in vectors]

    return embed


def make_chat(llm: LLMClient) -> LangMemChat:
    """The chat model LangMem is given."""
    return LangMemChat(client=llm)
