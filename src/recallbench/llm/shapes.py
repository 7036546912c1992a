"""The shape of a PromptTask's reply: a choice among labels, a regular expression, or a JSON schema.

A task declares its shape next to its parser (``PromptTask(reply=Choice(("A", "B")))``). With
``generator.structured: off`` (the default: the papers' free-text setting) the shape only
describes the expected reply (the repair turn quotes it); with a structured mode
(``recallbench.llm.structured``) the request carries it as a constraint on decoding. The prompt
is never changed.

The task's parser stays the one authority on what a reply means. A structured reply is first
brought back to the free-text form the parser reads (``to_text``): the JSON wrapper of a choice
or pattern (``{"answer": "..."}``, what OpenAI-style ``json_schema`` constraints produce) becomes
its string, and a ``JsonReply`` object becomes its ``render``-ing; any other reply is passed on
unchanged. So the free-text form and the structured form parse to the same value.

- ``Choice(labels)``: the whole reply is one of ``labels``.
- ``Pattern(regex)``: the whole reply matches ``regex`` (Python syntax, the subset that also
  means the same to vLLM/xgrammar, llama.cpp's GBNF (``llm/gbnf.py``), OpenAI's ``pattern`` and
  lm-format-enforcer: literals, classes, groups, alternation, bounded and unbounded repeats).
  A pattern keeps a reply in the paper's own layout (``Score: 7\\nReason: ...``) and bounds its
  length so that it ends before ``max_tokens``.
- ``JsonReply(model, render)``: a JSON object described by a pydantic model; ``render`` turns the
  validated object into the text the parser reads (default: the JSON itself, for parsers that
  read JSON). OpenAI's strict mode needs an object at the top level with every property
  required and no other: a list is wrapped in an object (``{"memos": [...]}``).
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from recallbench.store import JSONValue

WRAPPER_KEY = "answer"  # the one property of the JSON wrapper of a choice or a pattern
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


def _json_object(reply: str) -> dict[str, Any] | None:
    """The reply as a JSON object (code fences tolerated), else None."""
    text = _FENCE.sub("", reply.strip())
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _wrapper(value_schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {WRAPPER_KEY: value_schema},
        "required": [WRAPPER_KEY],
        "additionalProperties": False,
    }


def _unwrap(reply: str) -> str:
    data = _json_object(reply)
    if data is not None and set(data) == {WRAPPER_KEY} and isinstance(data[WRAPPER_KEY], str):
        return str(data[WRAPPER_KEY])
    return reply


@dataclass(frozen=True)
class Choice:
    """The whole reply is one of ``labels`` (exact strings)."""

    labels: tuple[str, ...]
    kind = "choice"

    def __post_init__(self) -> None:
        if not self.labels or any(not isinstance(x, str) or not x for x in self.labels):
            raise ValueError(f"Choice needs non-empty string labels, got {self.labels!r}")

    def regex(self) -> str:
        return "|".join(re.escape(label) for label in self.labels)

    def json_schema(self) -> dict[str, JSONValue]:
        return _wrapper({"type": "string", "enum": list(self.labels)})

    def spec(self) -> dict[str, JSONValue]:
        return {"choice": list(self.labels)}

    def to_text(self, reply: str) -> str:
        return _unwrap(reply)

    def describe(self) -> str:
        return "exactly one of: " + ", ".join(self.labels)

    def room(self, wrapped: bool) -> int:
        """Reply tokens that always fit a whole label (a token holds at least one character),
        in its JSON object when ``wrapped``: a constrained reply cut inside a label
        ("contradict") is no label at all (seen on llama.cpp with judge.nli's 4 tokens)."""
        longest = max(self.labels, key=len)
        return len(json.dumps({WRAPPER_KEY: longest})) if wrapped else len(longest) + 1


@dataclass(frozen=True)
class Pattern:
    """The whole reply matches the regular expression ``pattern``."""

    pattern: str
    kind = "regex"

    def __post_init__(self) -> None:
        re.compile(self.pattern)  # a bad pattern fails where it is declared

    def regex(self) -> str:
        return self.pattern

    def json_schema(self) -> dict[str, JSONValue]:
        return _wrapper({"type": "string", "pattern": f"^(?:{self.pattern})$"})

    def spec(self) -> dict[str, JSONValue]:
        return {"regex": self.pattern}

    def to_text(self, reply: str) -> str:
        return _unwrap(reply)

    def describe(self) -> str:
        return f"text matching the regular expression {self.pattern}"


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    """Replace local ``$ref``s by their definitions and drop titles (pydantic's schema)."""
    if isinstance(node, dict):
        if "$ref" in node:
            return _inline(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
        return {k: _inline(v, defs) for k, v in node.items() if k not in ("title", "$defs")}
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


@functools.lru_cache(maxsize=64)
def _schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """A pydantic model's JSON schema, refs inlined (built once per model: it is in every key)."""
    schema = model.model_json_schema()
    inlined: dict[str, Any] = _inline(schema, schema.get("$defs", {}))
    return inlined


def _strict_problems(node: Any, where: str = "$") -> list[str]:
    """Where ``node`` breaks OpenAI's strict subset (objects closed, every property required)."""
    out: list[str] = []
    if isinstance(node, dict):
        if node.get("type") == "object":
            props = set(node.get("properties", {}))
            if node.get("additionalProperties") is not False:
                out.append(f"{where}: additionalProperties must be false")
            if set(node.get("required", [])) != props:
                out.append(f"{where}: every property must be required")
        for key, value in node.items():
            out += _strict_problems(value, f"{where}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += _strict_problems(value, f"{where}[{i}]")
    return out


@dataclass(frozen=True)
class JsonReply:
    """A JSON object described by a pydantic model (``extra="forbid"``, no defaults).

    Args:
        model: the pydantic model class of the reply.
        render: validated object (a plain dict) -> the text the task's parser reads; None:
            the object's JSON text.
    """

    model: type[BaseModel]
    render: Callable[[dict[str, JSONValue]], str] | None = None
    kind = "json"

    def __post_init__(self) -> None:
        problems = _strict_problems(self.json_schema())
        if problems:
            raise ValueError(f"{self.model.__name__}: not a strict schema: {'; '.join(problems)}")

    def json_schema(self) -> dict[str, JSONValue]:
        return copy.deepcopy(_schema_of(self.model))  # a copy: callers may put it in a body

    def spec(self) -> dict[str, JSONValue]:
        return {"json": self.json_schema()}

    def to_text(self, reply: str) -> str:
        data = _json_object(reply)
        if data is None:
            return reply
        try:
            value = self.model.model_validate(data).model_dump(mode="json")
        except ValueError:  # pydantic's ValidationError: let the parser judge the reply
            return reply
        return self.render(value) if self.render else json.dumps(value, ensure_ascii=False)

    def describe(self) -> str:
        return "a JSON object with this schema: " + json.dumps(self.json_schema())


Shape = Choice | Pattern | JsonReply
