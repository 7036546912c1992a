"""PromptTask: a named use of an LLM with its paper prompt, reply parser and offline twin.

Every LLM call in recallbench goes through a PromptTask so that (1) the paper's prompt is a
constant next to the code that uses it, (2) replies are parsed in one place with a counted,
documented fallback, (3) usage and cost are recorded per task name and per stage
(memory building / answering / judging), and (4) the ``extractive`` backend can run the same task
without any LLM through ``offline``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar, overload

from recallbench.llm.shapes import Shape
from recallbench.llm.types import Message
from recallbench.store import JSONValue

Stage = Literal["memory", "answer", "judge", "generate"]

# ``TaskResult.failure`` starts with one of these: the call itself failed (after the backend's
# bounded retries), or the reply could not be parsed and ``task.fallback`` was used.
CALL_FAILURE = "call failed"
PARSE_FAILURE = "parse failed"


class ParseError(ValueError):
    """An LLM reply did not have the shape the task's parser expects."""


# A parser signals an unparseable reply with one of these (ParseError is a ValueError).
PARSE_ERRORS = (ValueError, KeyError, IndexError, TypeError)

T = TypeVar("T")
V = TypeVar("V", covariant=True)  # a result is read-only: a TaskResult[int] is a TaskResult[object]
Template = str | tuple[tuple[str, str], ...]


def text_reply(text: str) -> str:
    """The parser of a free-text task: the reply, stripped."""
    return text.strip()


@dataclass(frozen=True, init=False)
class PromptTask(Generic[T]):
    """A named prompt template with a parser and a deterministic offline implementation.

    ``T`` is the parsed value's type: ``LLM.run`` returns a ``TaskResult[T]``. It covers the
    fallback too (a task whose parser returns ``int`` and whose fallback is None is a
    ``PromptTask[int | None]``). A task without ``parse`` is free text (``text_reply``): a
    ``PromptTask[str]`` when its fallback is a string, ``PromptTask[str | None]`` without one.

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
        seed: sampling seed (part of the cache key); None uses the generator's ``seed``. A
            sampled call (temperature > 0) without any seed is never cached. Draw several
            samples with ``dataclasses.replace(task, seed=i)``.
        reply: the shape of the reply (``llm.shapes``: ``Choice``, ``Pattern``, ``JsonReply``),
            declared next to ``parse``; None for free text. A structured generator mode sends
            it as a constraint (``llm.structured``); ``parse_reply`` reads both forms.
    """

    name: str
    template: Template
    parse: Callable[[str], T]
    offline: Callable[..., str] | None
    fallback: T
    stage: Stage
    max_tokens: int
    temperature: float
    source: str
    seed: int | None
    reply: Shape | None

    # The dataclass' own __init__ cannot type a default parser (``text_reply`` is not a
    # ``Callable[[str], T]`` for every T): these overloads say which T a call builds.
    @overload
    def __init__(
        self: PromptTask[str],
        name: str,
        template: Template,
        parse: None = None,
        offline: Callable[..., str] | None = None,
        *,
        fallback: str,
        stage: Stage = "generate",
        max_tokens: int = 256,
        temperature: float = 0.0,
        source: str = "",
        seed: int | None = None,
        reply: Shape | None = None,
    ) -> None: ...

    @overload
    def __init__(
        self: PromptTask[str | None],
        name: str,
        template: Template,
        parse: None = None,
        offline: Callable[..., str] | None = None,
        fallback: None = None,
        stage: Stage = "generate",
        max_tokens: int = 256,
        temperature: float = 0.0,
        source: str = "",
        seed: int | None = None,
        reply: Shape | None = None,
    ) -> None: ...

    @overload
    def __init__(
        self,
        name: str,
        template: Template,
        parse: Callable[[str], T],
        offline: Callable[..., str] | None,
        fallback: T,
        stage: Stage = "generate",
        max_tokens: int = 256,
        temperature: float = 0.0,
        source: str = "",
        seed: int | None = None,
        reply: Shape | None = None,
    ) -> None: ...

    @overload
    def __init__(
        self,
        name: str,
        template: Template,
        parse: Callable[[str], T],
        offline: Callable[..., str] | None = None,
        *,
        fallback: T,
        stage: Stage = "generate",
        max_tokens: int = 256,
        temperature: float = 0.0,
        source: str = "",
        seed: int | None = None,
        reply: Shape | None = None,
    ) -> None: ...

    def __init__(
        self,
        name: str,
        template: Template,
        parse: Callable[[str], Any] | None = None,
        offline: Callable[..., str] | None = None,
        fallback: Any = None,
        stage: Stage = "generate",
        max_tokens: int = 256,
        temperature: float = 0.0,
        source: str = "",
        seed: int | None = None,
        reply: Shape | None = None,
    ) -> None:
        given = dict(locals())
        given["parse"] = text_reply if parse is None else parse
        for name_ in (f.name for f in dataclasses.fields(self)):
            object.__setattr__(self, name_, given[name_])

    def parse_reply(self, text: str) -> T:
        """Parse a reply in the free-text form or the structured form of ``reply``.

        The structured form is first brought back to the free-text form (``Shape.to_text``),
        so ``parse`` decides the value of both. A reply neither form explains raises
        ``ParseError`` naming the expected shape (what the repair turn tells the model).
        """
        if self.reply is None:
            return self.parse(text)
        try:
            return self.parse(self.reply.to_text(text))
        except PARSE_ERRORS as exc:
            raise ParseError(f"{exc} (expected {self.reply.describe()})") from None

    def render(self, **fields: object) -> list[Message]:
        """Fill the template with ``fields`` and return chat messages."""
        try:
            if isinstance(self.template, str):
                return [{"role": "user", "content": self.template.format(**fields)}]
            return [
                {"role": role, "content": text.format(**fields)} for role, text in self.template
            ]
        except KeyError as exc:
            raise KeyError(f"task {self.name!r}: template field {exc} not given") from None


@dataclass(frozen=True)
class TaskResult(Generic[V]):
    """What ``LLM.run`` returns: the parsed value, the raw reply and the call's usage.

    ``failure`` is None on success, else starts with ``CALL_FAILURE`` (value = the task's
    fallback, or "" for ``LLM.chat``) or ``PARSE_FAILURE`` (value = the task's fallback).
    ``cost_usd`` is None when the model has no known price; cache hits cost 0. ``repairs``: the
    repair turns this result took (``generator.repairs``); its tokens, latency and cost add up
    every turn, ``raw`` is the last reply.
    """

    value: V
    raw: str
    parsed: bool = True
    cached: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float | None = 0.0
    failure: str | None = None
    messages: list[Message] = field(default_factory=list)
    repairs: int = 0

    def usage_dict(self) -> dict[str, JSONValue]:
        """Return this call's usage as a JSON-ready dict (for ``Prediction.usage``)."""
        out: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": self.cost_usd,
            "latency_s": round(self.latency_s, 6),
            "cached": self.cached,
        }
        if self.repairs:
            out["repairs"] = self.repairs
        return out


def unparsed(result: TaskResult[object]) -> bool:
    """Did ``result``'s reply fail its parser (not the call)?"""
    return result.failure is not None and result.failure.startswith(PARSE_FAILURE)


def merged_turns(before: TaskResult[object], after: TaskResult[V]) -> TaskResult[V]:
    """``after`` (a repair turn's result) carrying the usage of every turn so far."""
    costs = (before.cost_usd, after.cost_usd)
    cost = None if costs[0] is None or costs[1] is None else costs[0] + costs[1]
    return dataclasses.replace(
        after,
        cached=before.cached and after.cached,
        prompt_tokens=before.prompt_tokens + after.prompt_tokens,
        completion_tokens=before.completion_tokens + after.completion_tokens,
        latency_s=before.latency_s + after.latency_s,
        cost_usd=cost,
    )
