"""PromptTask: a named use of an LLM with its paper prompt, reply parser and offline twin.

Every LLM call in recallbench goes through a PromptTask so that (1) the paper's prompt is a
constant next to the code that uses it, (2) replies are parsed in one place with a counted,
documented fallback, (3) usage and cost are recorded per task name and per stage
(memory building / answering / judging), and (4) the ``extractive`` backend can run the same task
without any LLM through ``offline``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

Stage = Literal["memory", "answer", "judge", "generate"]
Message = dict[str, str]


class ParseError(ValueError):
    """An LLM reply did not have the shape the task's parser expects."""


def _identity(text: str) -> str:
    return text.strip()


@dataclass(frozen=True)
class PromptTask:
    """A named prompt template with a parser and a deterministic offline implementation.

    Attributes:
        name: unique task name; usage is recorded under it (e.g. ``"lufy.importance"``).
        template: the prompt; ``str.format`` fields. A string is sent as one user message; a
            tuple of ``(role, text)`` pairs is sent as that chat.
        parse: reply text -> value; raises ``ParseError`` (or ValueError) when unparseable.
        offline: ``(**fields) -> reply text`` used by the ``extractive`` backend. It returns
            text in the same format an LLM would, so the parser is exercised offline too.
        fallback: value used when parsing fails (documented per task); the failure is counted.
        stage: which cost bucket the call belongs to.
        max_tokens, temperature: decoding parameters (part of the cache key).
        source: where the template comes from (e.g. "THEANINE Fig. 24, verbatim").
    """

    name: str
    template: str | tuple[tuple[str, str], ...]
    parse: Callable[[str], Any] = _identity
    offline: Callable[..., str] | None = None
    fallback: Any = None
    stage: Stage = "generate"
    max_tokens: int = 256
    temperature: float = 0.0
    source: str = ""

    def render(self, **fields: Any) -> list[Message]:
        """Fill the template with ``fields`` and return chat messages."""
        try:
            if isinstance(self.template, str):
                return [{"role": "user", "content": self.template.format(**fields)}]
            return [{"role": role, "content": text.format(**fields)} for role, text in self.template]
        except KeyError as exc:
            raise KeyError(f"task {self.name!r}: template field {exc} not given") from None


@dataclass(frozen=True)
class TaskResult:
    """What ``LLM.run`` returns: the parsed value, the raw reply and the call's usage."""

    value: Any
    raw: str
    parsed: bool = True
    cached: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0
    failure: str | None = None
    messages: list[Message] = field(default_factory=list)
