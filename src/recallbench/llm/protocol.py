"""``LLMClient``: what memory methods, protocols and judges use of an LLM.

In a module of its own so that ``recallbench.llm.types`` (which ``task`` and ``usage`` import)
does not import them back: the protocol's signatures need ``PromptTask``, ``TaskResult`` and
``Usage``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from recallbench.llm.task import PromptTask, TaskResult
from recallbench.llm.types import Backend, Message
from recallbench.llm.usage import Usage


@runtime_checkable
class LLMClient(Protocol):
    """What memory methods, protocols and judges use of an LLM (``recallbench.llm.LLM`` is one).

    The seam is typed so a replacement (a recording double in a test, another client) shows in
    the signatures what it must offer: the backend's identity (``backend.name``,
    ``backend.offline``), usage counters, token counting, and the three ways to call.
    """

    backend: Backend
    usage: Usage

    @property
    def model(self) -> str: ...

    @property
    def context_length(self) -> int: ...

    def count_tokens(self, text: str) -> int: ...

    def run(self, task: PromptTask, **fields: Any) -> TaskResult: ...

    def run_many(
        self, task: PromptTask, fields_list: list[dict[str, Any]], *, progress: bool | None = None
    ) -> list[TaskResult]: ...

    def chat(
        self,
        messages: list[Message],
        *,
        name: str,
        stage: str,
        offline: Callable[[], str],
        max_tokens: int = 256,
        temperature: float = 0.0,
        seed: int | None = None,
    ) -> TaskResult: ...
