"""The seams between graphiti-core and recallbench: its LLM, embedder and reranker, backed by ours.

Graphiti takes three clients (``Graphiti(llm_client=, embedder=, cross_encoder=)``); each one
here is a thin adapter onto the run's collaborators, so every call Graphiti makes goes through
recallbench's LLM layer (cached, metered per task name, budgeted, answered offline by the twin
of ``_twin``) and the run's embedder (cached vectors):

- ``GraphitiLLM``: Graphiti asks for pydantic structured output (``response_model``) and names
  each prompt (``prompt_name``, e.g. ``extract_nodes.extract_message``). Every call is the
  PromptTask ``graphiti.<prompt_name>``: Graphiti's own messages (system + user, with the JSON
  schema Graphiti appends itself) sent unchanged; the reply is validated against Graphiti's own
  response model (unparseable: the model's empty object, counted as a parse failure).
- ``GraphitiEmbedder``: ``create`` / ``create_batch`` on the run's embedder.
- ``GraphitiReranker``: ``rank`` by cosine similarity of the run's embedder (Graphiti's
  ``OpenAIRerankerClient`` asks the LLM one yes/no question per passage and reads the
  logprobs, which our LLM layer does not return: a deviation, see ``_graphiti``).
"""

from __future__ import annotations

import contextvars
import json
import re
from collections.abc import Iterable
from typing import Any

import numpy as np
from pydantic import BaseModel, ValidationError

from recallbench.embed import TextEmbedder
from recallbench.llm.protocol import LLMClient as RecallLLM
from recallbench.llm.task import ParseError, PromptTask
from recallbench.memory.graphiti._twin import offline_reply

try:
    from graphiti_core.cross_encoder.client import CrossEncoderClient
    from graphiti_core.embedder.client import EmbedderClient
    from graphiti_core.llm_client.client import LLMClient
    from graphiti_core.llm_client.config import DEFAULT_MAX_TOKENS, LLMConfig, ModelSize
    from graphiti_core.prompts.models import Message
except ImportError as exc:  # pragma: no cover - exercised only without graphiti-core
    raise ImportError(
        "memory=graphiti needs graphiti-core and kuzu: "
        "pip install 'graphiti-core==0.31.2' 'kuzu==0.11.3' (or make install)"
    ) from exc

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")
_PROMPT = contextvars.ContextVar("graphiti_prompt_name", default="unnamed")


def parse_model_reply(reply: str, model: type[BaseModel] | None) -> dict[str, Any]:
    """Read a reply as JSON and validate it against Graphiti's ``model``; return the dict."""
    text = _FENCE.sub("", reply.strip())
    try:
        data = json.loads(text, strict=False)
    except json.JSONDecodeError as exc:
        raise ParseError(f"graphiti reply is not JSON: {reply[:80]!r}") from exc
    if not isinstance(data, dict):
        raise ParseError(f"graphiti reply is not a JSON object: {reply[:80]!r}")
    if model is None:
        return data
    try:
        return model.model_validate(data).model_dump(mode="json")
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ParseError(
            f"graphiti reply does not fit {model.__name__}: {where}: {first['msg']}"
        ) from None


def empty_object(model: type[BaseModel] | None) -> dict[str, Any]:
    """The fallback of a task: the model's emptiest valid object (lists empty, optionals None)."""
    if model is None:
        return {}
    out: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        if not field.is_required():
            continue
        text = str(field.annotation)
        out[name] = [] if text.startswith("list") else None
    try:
        return model.model_validate(out).model_dump(mode="json")
    except ValidationError:
        return {}


class GraphitiLLM(LLMClient):
    """Graphiti's LLM client answered by recallbench's LLM layer, one task per Graphiti prompt."""

    def __init__(self, llm: RecallLLM, max_tokens: int = DEFAULT_MAX_TOKENS) -> None:
        super().__init__(LLMConfig(model=llm.model, max_tokens=max_tokens), cache=False)
        self.client = llm
        self._tasks: dict[tuple[str, str], PromptTask[dict[str, Any]]] = {}

    def task(self, prompt: str, model: type[BaseModel] | None) -> PromptTask[dict[str, Any]]:
        """The PromptTask ``graphiti.<prompt>`` for replies of ``model`` (made once)."""
        key = (prompt, model.__name__ if model else "")
        if key not in self._tasks:
            self._tasks[key] = PromptTask(
                name=f"graphiti.{prompt}",
                template=(("system", "{system}"), ("user", "{user}")),
                parse=lambda reply: parse_model_reply(reply, model),
                offline=offline_reply,
                fallback=empty_object(model),
                stage="memory",
                max_tokens=self.max_tokens,
                temperature=0.0,
                source=f"graphiti-core 0.31.2 prompt {prompt} (Graphiti's own, unchanged)",
            )
        return self._tasks[key]

    async def generate_response(
        self,
        messages: list[Message],
        response_model: type[BaseModel] | None = None,
        max_tokens: int | None = None,
        model_size: ModelSize = ModelSize.medium,
        group_id: str | None = None,
        prompt_name: str | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """Graphiti's entry point: remember the prompt's name for ``_generate_response``.

        A context variable, not an attribute: Graphiti runs prompts concurrently
        (``semaphore_gather``), each in its own task and context.
        """
        _PROMPT.set(prompt_name or "unnamed")
        result: dict[str, Any] = await super().generate_response(
            messages, response_model, max_tokens, model_size, group_id, prompt_name, **kwargs
        )
        return result

    async def _generate_response(
        self,
        messages: list[Message],
        response_model: type[BaseModel] | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        model_size: ModelSize = ModelSize.medium,
        *,
        model: str | None = None,
    ) -> dict[str, Any]:
        system = "\n".join(m.content for m in messages if m.role == "system")
        user = "\n".join(m.content for m in messages if m.role != "system")
        task = self.task(_PROMPT.get(), response_model)
        result = self.client.run(task, system=system, user=user)
        return dict(result.value)


class GraphitiEmbedder(EmbedderClient):
    """Graphiti's embedder answered by the run's embedder (unit vectors, cached)."""

    def __init__(self, embedder: TextEmbedder) -> None:
        self.embedder = embedder

    async def create(self, input_data: str | list[str] | Iterable[Any]) -> list[float]:
        """Embed one text (Graphiti passes a string or a one-string list)."""
        texts = [input_data] if isinstance(input_data, str) else [str(t) for t in input_data]
        return [float(v) for v in self.embedder.encode(texts[:1])[0]]

    async def create_batch(self, input_data_list: list[str]) -> list[list[float]]:
        """Embed several texts in one call."""
        rows = self.embedder.encode([str(t) for t in input_data_list])
        return [[float(v) for v in row] for row in rows]


class GraphitiReranker(CrossEncoderClient):
    """Graphiti's cross-encoder answered by cosine similarity of the run's embedder."""

    def __init__(self, embedder: TextEmbedder) -> None:
        self.embedder = embedder

    async def rank(self, query: str, passages: list[str]) -> list[tuple[str, float]]:
        """The passages with their similarity to ``query``, most similar first (stable)."""
        if not passages:
            return []
        vectors = self.embedder.encode([query, *passages])
        scores = np.asarray(vectors[1:] @ vectors[0], dtype=float)
        order = sorted(range(len(passages)), key=lambda i: -scores[i])
        return [(passages[i], float(scores[i])) for i in order]
