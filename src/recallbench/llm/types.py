"""Shared types of the LLM layer: chat messages, decoding parameters, a backend's completion,
the ``Backend`` protocol every backend implements, ``BackendBase`` (its defaults, the base of
every backend), and prompt-token estimation. The
``LLMClient`` protocol memory methods, protocols and judges are typed against is in
``recallbench.llm.protocol`` (it needs ``task`` and ``usage``, which import this module).

Backends live in ``recallbench.llm.backends`` (extractive, openai, hf, gguf); ``LLM``
(``recallbench.llm.client``) drives one of them through this protocol.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from recallbench.llm.structured import Structured
from recallbench.store import JSONValue

Message = dict[str, str]

# OpenAI's chat format adds ~4 tokens per message and 3 to prime the reply (OpenAI cookbook,
# "How to count tokens with tiktoken", gpt-3.5/gpt-4 family); used for local estimates only.
TOKENS_PER_MESSAGE = 4
TOKENS_PER_REPLY = 3


@dataclass(frozen=True)
class Decoding:
    """Decoding parameters of one call; all of them are part of the cache key.

    ``structured``: the constraint on the reply's shape (``llm.structured``), None for free text.
    """

    max_tokens: int
    temperature: float
    seed: int | None = None
    structured: Structured | None = None

    def as_dict(self) -> dict[str, JSONValue]:
        out: dict[str, JSONValue] = {
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "seed": self.seed,
        }
        if self.structured is not None:  # free-text keys stay what they always were
            out["structured"] = self.structured.as_dict()
        return out


@dataclass(frozen=True)
class Completion:
    """What a backend returns for one call."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float


class BackendCallError(RuntimeError):
    """A call failed after the backend's bounded retries (counted, not fatal)."""


@runtime_checkable
class Backend(Protocol):
    """What ``LLM`` needs from a backend: every member ``LLM`` and its ``CallFlow`` use.

    A synchronous backend (``is_async`` False) answers through ``complete``, an async one
    through ``acomplete`` on ``LLM``'s event loop; the other method raises
    ``NotImplementedError`` (the flow never calls it). The no-model backend (``offline``) calls
    neither: ``LLM`` answers with each task's offline implementation.

    Every ability is a member every backend has (``BackendBase`` gives the defaults), so callers
    read ``llm.backend.offline`` or ``.concurrency`` directly, never probe with ``getattr``.
    """

    name: str
    model: str
    endpoint: str | None  # the server that answers (API backends), part of the cache key
    base_url: str | None  # the API's base URL as configured (run.json); None: no server
    local: bool  # True: runs on this machine, costs 0
    offline: bool  # True: no model at all, ``LLM`` uses the task's offline implementation
    is_async: bool  # True: ``acomplete`` on LLM's event loop; False: ``complete``
    concurrency: int  # requests in flight at most (1: one call at a time)

    @property
    def context_length(self) -> int: ...

    def count_tokens(self, text: str) -> int: ...

    def complete(self, messages: list[Message], dec: Decoding) -> Completion:
        """Answer one call (synchronous backends); raise ``BackendCallError`` when it fails."""
        ...

    async def acomplete(self, messages: list[Message], dec: Decoding) -> Completion:
        """Answer one call (async backends); raise ``BackendCallError`` when it fails."""
        ...

    async def aowner(self) -> str | None:
        """Who serves the model (``/models`` ``owned_by``) for ``structured: auto``; None: unknown."""
        ...

    async def aclose(self) -> None:
        """Release what ``acomplete`` opened (on ``LLM``'s event loop)."""
        ...

    def close(self) -> None: ...


class BackendBase:
    """The defaults of ``Backend``'s abilities: a local synchronous model without a server.

    A backend derives from it and sets what differs (``name``, ``model``, ``context_length``,
    ``count_tokens`` and the call it answers with are its own).
    """

    endpoint: str | None = None
    base_url: str | None = None
    local: bool = True
    offline: bool = False
    is_async: bool = False
    concurrency: int = 1

    def complete(self, messages: list[Message], dec: Decoding) -> Completion:
        raise NotImplementedError(f"{type(self).__name__} is async: LLM calls acomplete")

    async def acomplete(self, messages: list[Message], dec: Decoding) -> Completion:
        raise NotImplementedError(f"{type(self).__name__} is synchronous: LLM calls complete")

    async def aowner(self) -> str | None:
        return None  # no server to ask

    async def aclose(self) -> None:
        pass

    def close(self) -> None:
        pass


def count_message_tokens(messages: list[Message], count: Callable[[str], int]) -> int:
    """Estimate the prompt tokens of chat ``messages`` with a text token counter."""
    body = sum(count(m.get("content", "")) + TOKENS_PER_MESSAGE for m in messages)
    return body + TOKENS_PER_REPLY
