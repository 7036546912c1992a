"""Graphiti's prompts answered without an LLM: the deterministic offline twin (``generator=extractive``).

Every reply is a JSON object valid for the response model Graphiti asked for (tests validate
them against graphiti-core's own pydantic models); the model is read from the JSON schema
Graphiti appends to the prompt. What it extracts, by prompt (and model):

- ``extract_nodes.*`` (``ExtractedEntities``): the message's speaker (the text before the first
  colon), the speaker of the previous message when another person (the one spoken to), and each
  capitalized word run of the body not opening a sentence (proper names: "LGBTQ", "Paris").
- ``extract_edges.edge`` (``ExtractedEdges``): when the message says something (at least
  ``MIN_WORDS`` content words): one fact from the speaker to each other entity, the message's
  sentence naming that entity (the whole message for the one spoken to), relation ``MENTIONS``
  or ``TOLD``; ``valid_at`` = the episode's reference time (the session's date).
- ``extract_edges.extract_timestamps*`` (``EdgeTimestamps``, ``BatchEdgeTimestamps``): ``valid_at`` = the reference time, no ``invalid_at``.
- ``dedupe_nodes.nodes`` (``NodeResolutions``): a duplicate exactly when the names match case-insensitively.
- ``dedupe_edges.resolve_edge`` (``EdgeDuplicate``): a duplicate exactly when the fact texts match; nothing contradicted.
- summaries (``SummarizedEntities``, ``Summary``, ``SummaryDescription``): each entity's summary = the last two sentences of the messages that name it,
  cut to Graphiti's limit.
- any other model: the schema's emptiest valid object, so a new prompt of a later
  graphiti-core never breaks a run.

A no-LLM baseline, never Graphiti's extraction quality: names are found by capitalization.
"""

from __future__ import annotations

import json
import re
from typing import Any

from recallbench.text import content_words

MIN_WORDS = 3  # a message with fewer content words states no fact
MAX_SUMMARY = 250  # below graphiti-core's MAX_SUMMARY_CHARS
_SCHEMA = re.compile(r"Respond with a JSON object in the following format:\n\n(\{.*\})\s*$", re.S)
_NAME = re.compile(r"\b([A-Z][\w'&-]*(?:\s+[A-Z][\w'&-]*)*)")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_NOT_NAMES = {"I", "I'm", "I've", "I'll", "I'd", "OK", "Ok", "Oh", "Hey", "Hi", "Wow", "Yes", "No"}


def _section(text: str, *tags: str) -> str:
    for tag in tags:
        found = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", text, re.S)
        if found:
            return found.group(1).strip()
    return ""


def _json_section(text: str, *tags: str) -> Any:
    raw = _section(text, *tags)
    try:
        return json.loads(raw) if raw else []
    except json.JSONDecodeError:
        return []


def _speaker(message: str) -> tuple[str, str]:
    head, sep, body = message.partition(":")
    if sep and 0 < len(head) <= 40 and "\n" not in head:
        return head.strip(), body.strip()
    return "", message.strip()


def _texts(value: Any) -> list[str]:
    """The message texts of a JSON section: strings, or objects with a ``content``."""
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if isinstance(item, dict):
            item = item.get("content", "")
        if isinstance(item, str) and item.strip():
            out.append(item.strip())
    return out


def _previous_speaker(user: str) -> str:
    previous = _texts(_json_section(user, "PREVIOUS MESSAGES", "PREVIOUS_MESSAGES"))
    return _speaker(previous[-1])[0] if previous else ""


def _names(body: str) -> list[str]:
    found: list[str] = []
    for sentence in _SENTENCE.split(body):
        for match in _NAME.finditer(sentence):
            name = match.group(1).strip()
            if match.start() == len(sentence) - len(sentence.lstrip()):
                continue  # opens the sentence: capitalized by grammar, not a name
            if name not in _NOT_NAMES and name not in found:
                found.append(name)
    return found


def _entities(user: str) -> dict[str, Any]:
    speaker, body = _speaker(_section(user, "CURRENT MESSAGE", "CURRENT_MESSAGE"))
    names = [n for n in (speaker, _previous_speaker(user)) if n]
    names += [n for n in _names(body) if n.lower() not in {m.lower() for m in names}]
    unique = list(dict.fromkeys(names))
    return {"extracted_entities": [{"name": n, "entity_type_id": 0} for n in unique]}


def _edges(user: str) -> dict[str, Any]:
    speaker, body = _speaker(_section(user, "CURRENT MESSAGE", "CURRENT_MESSAGE"))
    when = _section(user, "REFERENCE_TIME", "REFERENCE TIME").split("#")[0].strip() or None
    nodes = _json_section(user, "ENTITIES")
    names = [str(n.get("name")) for n in nodes if isinstance(n, dict) and n.get("name")]
    if not speaker or speaker not in names or len(content_words(body)) < MIN_WORDS:
        return {"edges": []}
    addressee = _previous_speaker(user)
    edges = []
    for name in names:
        if name == speaker:
            continue
        if name == addressee:
            relation, fact = "TOLD", f"{speaker} told {name}: {body}"
        else:
            said = next((s for s in _SENTENCE.split(body) if name in s), body)
            relation, fact = "MENTIONS", f"{speaker}: {said}"
        edges.append(
            {
                "source_entity_name": speaker,
                "target_entity_name": name,
                "relation_type": relation,
                "fact": fact,
                "valid_at": when,
                "invalid_at": None,
                "episode_indices": [0],
            }
        )
    return {"edges": edges}


def _timestamps(user: str) -> dict[str, Any]:
    when = _section(user, "REFERENCE TIME", "REFERENCE_TIME").split("#")[0].strip() or None
    facts = _json_section(user, "FACTS")
    if "<FACTS>" in user:
        count = len(facts) if isinstance(facts, list) else 0
        return {"timestamps": [{"valid_at": when, "invalid_at": None}] * count}
    return {"valid_at": when, "invalid_at": None}


def _dedupe_nodes(user: str) -> dict[str, Any]:
    nodes = _json_section(user, "ENTITIES")
    existing = _json_section(user, "EXISTING ENTITIES")
    known = {
        str(e.get("name", "")).lower(): int(e["candidate_id"])
        for e in existing
        if isinstance(e, dict) and isinstance(e.get("candidate_id"), int)
    }
    out = []
    for i, node in enumerate(nodes if isinstance(nodes, list) else []):
        name = str(node.get("name", "")) if isinstance(node, dict) else str(node)
        out.append({"id": i, "name": name, "duplicate_candidate_id": known.get(name.lower(), -1)})
    return {"entity_resolutions": out}


def _dedupe_edges(user: str) -> dict[str, Any]:
    new = _section(user, "NEW FACT")
    existing = _json_section(user, "EXISTING FACTS")
    same = [
        int(e["idx"])
        for e in existing
        if isinstance(e, dict) and "idx" in e and str(e.get("fact", "")) in new
    ]
    return {"duplicate_facts": same, "contradicted_facts": []}


def _summaries(user: str, schema: dict[str, Any]) -> dict[str, Any]:
    texts: list[str] = []
    for line in _section(user, "MESSAGES").splitlines():
        try:
            texts += _texts(json.loads(line))
        except json.JSONDecodeError:
            texts.append(line.strip())
    texts = texts or [_section(user, "CURRENT MESSAGE", "CURRENT_MESSAGE")]
    sentences = [s.strip() for t in texts for s in _SENTENCE.split(t) if s.strip()]
    entities = _json_section(user, "ENTITIES", "ENTITY", "NODE")
    entities = entities if isinstance(entities, list) else [entities]
    names = [str(e.get("name", "")) for e in entities if isinstance(e, dict) and e.get("name")]

    def about(name: str) -> str:
        said = [s for s in sentences if name and name in s]
        return " ".join(said[-2:])[:MAX_SUMMARY]

    props = schema.get("properties", {})
    if "summaries" in props:
        return {"summaries": [{"name": n, "summary": about(n)} for n in names if about(n)]}
    if "description" in props:
        return {"description": (sentences[0] if sentences else "")[:MAX_SUMMARY]}
    return {"summary": about(names[0]) if names else ""}


def empty_for(schema: dict[str, Any]) -> dict[str, Any]:
    """The emptiest object of a JSON schema: required lists empty, strings "", numbers -1."""
    out: dict[str, Any] = {}
    for name in schema.get("required", []):
        prop = schema.get("properties", {}).get(name, {})
        kinds = [prop.get("type")] + [p.get("type") for p in prop.get("anyOf", [])]
        if "array" in kinds:
            out[name] = []
        elif "null" in kinds:
            out[name] = None
        elif "string" in kinds:
            out[name] = ""
        elif "integer" in kinds or "number" in kinds:
            out[name] = -1
        elif "boolean" in kinds:
            out[name] = False
        else:
            out[name] = {}
    return out


def offline_reply(user: str, **_: object) -> str:
    """Answer one Graphiti prompt as JSON text, by the response model Graphiti asked for (the
    ``title`` of the JSON schema it appends to every structured prompt)."""
    found = _SCHEMA.search(user)
    schema: dict[str, Any] = json.loads(found.group(1)) if found else {}
    title = schema.get("title", "")
    if title == "ExtractedEntities":
        reply = _entities(user)
    elif title == "ExtractedEdges":
        reply = _edges(user)
    elif title in ("EdgeTimestamps", "BatchEdgeTimestamps"):
        reply = _timestamps(user)
    elif title == "NodeResolutions":
        reply = _dedupe_nodes(user)
    elif title == "EdgeDuplicate":
        reply = _dedupe_edges(user)
    elif title in ("SummarizedEntities", "Summary", "SummaryDescription"):
        reply = _summaries(user, schema)
    else:
        reply = empty_for(schema)
    return json.dumps(reply, ensure_ascii=False)
