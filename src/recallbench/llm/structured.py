"""Structured outputs: how a task's reply shape (``llm/shapes.py``) travels in a request.

``generator.structured`` chooses the mode. The paper's prompt is sent unchanged; the mode only
ADDS a constraint on decoding, so a run that uses one deviates from the papers' free-text setting
and says so (``run.json`` generator ``structured``, the table header). Tasks without a shape
(free text: summaries, answers, responses) are sent as before in every mode.

====================  ==========================================================================
``off`` (default)     nothing added: the papers' setting; replies are parsed as free text
``json_schema``       OpenAI's ``response_format={"type": "json_schema", "json_schema": {name,
                      schema, strict: true}}`` (api.openai.com, Azure, vLLM, SGLang, llama.cpp,
                      Ollama >= 0.5 on ``/v1``). JSON only: a choice or pattern goes as the
                      wrapper ``{"answer": <enum | pattern>}`` and is unwrapped before parsing.
                      Length and numeric bounds are left out of the schema sent (outside the
                      strictest common subset). As Inspect warns, not every server honours
                      ``strict``: replies are parsed and validated anyway. llama-cpp-python
                      refuses this type (it takes ``json_object`` only): use ``llamacpp``.
``vllm``              vLLM >= 0.12: ``structured_outputs`` = ``{"choice": [...]}``,
                      ``{"regex": ...}`` or ``{"json": schema}`` in the request body (the
                      OpenAI client's ``extra_body``; the old ``guided_*`` fields are gone).
                      Choices and patterns come back as plain text in the paper's layout.
``llamacpp``          llama.cpp's server and llama-cpp-python's: a choice or a pattern as a GBNF
                      ``grammar`` (``llm/gbnf.py``), a JSON shape as ``response_format={"type":
                      "json_object", "schema": ...}`` (both servers turn it into a grammar).
``local``             the in-process ``hf`` backend: constrained decoding with lm-format-enforcer
                      (``llm/backends/enforce.py``); same reply forms as ``vllm``.
``auto``              ``local`` on the ``hf`` backend; on ``openai``, asked once from the
                      endpoint's ``GET /models`` (``owned_by``): ``vllm`` -> vllm, ``llamacpp``
                      (llama.cpp) or ``me`` (llama-cpp-python) -> llamacpp, anything else (OpenAI,
                      Ollama, ...) -> json_schema. The resolved mode is what the cache key and
                      ``run.json`` hold.
====================  ==========================================================================

Why plain text for choices and patterns wherever the server allows it: the reply keeps the
paper's own layout (``- Relation: Cause``), a reply cut by ``max_tokens`` still parses (a cut
JSON object does not), and a small model spends no tokens on JSON syntax.

The mode and the exact constraint are part of a call's cache key (``Structured.as_dict``), so
replies made under one constraint are never served for another or for free text.

Deviations:
- Any mode but ``off`` constrains decoding, which the papers (free-text replies from GPT-3.5/4,
  ChatGLM, Llama) never did; the prompts stay verbatim. Default ``off`` = the papers' setting;
  ``run.json`` (generator ``structured``, the resolved mode) and table headers name the mode.
- The reply shapes are ours, read off each paper's prompt and parser (``llm/shapes.py``); a
  shape can be narrower than what a paper's parser would accept (e.g. bounded lengths).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from recallbench.errors import ConfigError
from recallbench.llm.gbnf import choice_to_gbnf, regex_to_gbnf
from recallbench.llm.shapes import Choice, JsonReply, Pattern, Shape
from recallbench.store import JSONValue

MODES = ("off", "json_schema", "vllm", "llamacpp", "local", "auto")
API_MODES = ("json_schema", "vllm", "llamacpp")  # what the openai backend can send
# Keywords outside OpenAI's strict subset (string lengths, numeric bounds): not sent there.
_NOT_STRICT = frozenset(
    {"minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}
)
# ``owned_by`` of ``GET /models`` -> mode (``auto`` on the openai backend)
OWNERS = {"vllm": "vllm", "llamacpp": "llamacpp", "me": "llamacpp"}


@dataclass(frozen=True)
class Structured:
    """The constraint one call carries: the resolved mode, the task's shape and its name."""

    mode: str
    shape: Shape
    name: str

    def as_dict(self) -> dict[str, JSONValue]:
        """The constraint as plain data (part of the cache key)."""
        return {"mode": self.mode, **self.shape.spec()}


def check_mode(mode: str, backend: str) -> str:
    """Return ``mode`` if ``backend`` can use it, else raise ``ConfigError`` naming the options."""
    if mode not in MODES:
        raise ConfigError(f"generator.structured={mode!r}: options are {', '.join(MODES)}")
    allowed = {
        "openai": ("off", *API_MODES, "auto"),
        "hf": ("off", "local", "auto"),
        "extractive": ("off",),
    }.get(backend, ("off",))
    if mode not in allowed:
        raise ConfigError(
            f"generator.structured={mode!r} does not apply to the {backend} backend "
            f"(options there: {', '.join(allowed)}); structured outputs constrain a model's "
            "decoding, the extractive backend has no model"
        )
    return mode


def schema_name(task_name: str) -> str:
    """OpenAI's ``json_schema.name``: letters, digits, ``_`` and ``-``, at most 64."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", task_name)[:64] or "reply"


def strict_subset(node: JSONValue) -> JSONValue:
    """The schema ``node`` without the keywords OpenAI's strict mode refuses (``_NOT_STRICT``);
    property names are kept whatever they are."""
    if isinstance(node, list):
        return [strict_subset(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, JSONValue] = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: strict_subset(sub) for name, sub in value.items()}
        elif key not in _NOT_STRICT:
            out[key] = strict_subset(value)
    return out


def request_extras(structured: Structured) -> dict[str, JSONValue]:
    """The fields ``structured`` adds to an OpenAI-compatible chat completion request body."""
    shape, mode = structured.shape, structured.mode
    if mode == "json_schema":
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {
                    "name": schema_name(structured.name),
                    "schema": strict_subset(shape.json_schema()),
                    "strict": True,
                },
            }
        }
    if mode == "vllm":
        return {"structured_outputs": shape.spec()}
    if mode == "llamacpp":
        if isinstance(shape, Choice):
            return {"grammar": choice_to_gbnf(shape.labels)}
        if isinstance(shape, Pattern):
            return {"grammar": regex_to_gbnf(shape.pattern)}
        if isinstance(shape, JsonReply):
            return {"response_format": {"type": "json_object", "schema": shape.json_schema()}}
    raise ValueError(f"no request fields for structured mode {mode!r}")


def mode_from_owner(owned_by: str | None) -> str:
    """``auto`` on an OpenAI-compatible server: the mode its ``/models`` owner implies."""
    return OWNERS.get(str(owned_by or "").lower(), "json_schema")
