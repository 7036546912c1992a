"""``LLMClient``: what memory methods, protocols and judges use of an LLM.

In a module of its own so that ``recallbench.llm.types`` (which ``task`` and ``usage`` import)
does not import them back: the protocol's signatures need ``PromptTask``, ``TaskResult`` and
``Usage``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, TypeVar, runtime_checkable

from recallbench.llm.budget import Meter
from recallbench.llm.task import PromptTask, TaskResult
from recallbench.llm.types import Backend, Message
from recallbench.llm.usage import Usage
from recallbench.store import JSONValue

T = TypeVar("T")


@runtime_checkable
class LLMClient(Protocol):
    """What memory methods, protocols and judges use of an LLM (``recallbench.llm.LLM`` is one).

    The seam is typed so a replacement (a recording double in a test, another client) shows in
    the signatures what it must offer: the backend's identity (``backend.name``,
    ``backend.offline``), usage counters, the budget meter, its repair turns, what it is for
    run.json (``describe``), token counting, and the three ways to call.
    """

    backend: Backend
    usage: Usage
    meter: Meter  # the job's budget and plan counts (``llm.budget``)

    @property
    def repairs(self) -> int: ...

    def describe(self) -> dict[str, JSONValue]: ...

    @property
    def model(self) -> str: ...

    @property
    def context_length(self) -> int: ...

    def count_tokens(self, text: str) -> int: ...

    def run(self, task: PromptTask[T], **fields: object) -> TaskResult[T]: ...

    def run_many(
        self,
        task: PromptTask[T],
        fields_list: Sequence[Mapping[str, object]],
        *,
        progress: bool | None = None,
    ) -> list[TaskResult[T]]: ...

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
    ) -> TaskResult[str]: ...
