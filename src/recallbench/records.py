"""Frozen records passed between stages (docs/architecture.md, "Seams").

Every record has a stable string id taken from the dataset (never a list position alone),
serializes to a JSON-ready dict with ``to_dict`` and comes back losslessly with ``from_dict``.
Sequences are stored as tuples so that records stay immutable; free-form mappings
(``labels``, ``gold``, ``meta``, ``attrs``, ``usage``) hold JSON values only.
``Prediction.meta`` is typed per kind (keys listed) in ``payloads``; verdicts in ``verdict``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

JSON = Any  # deprecated (issue 53): new code takes verdict.JSONValue and checks what it reads

__all__ = [
    "Turn",
    "Session",
    "QAItem",
    "Episode",
    "MemoryItem",
    "in_memory",
    "decayed_recallable",
    "Query",
    "Recall",
    "Prediction",
    "Score",
    "read_jsonl",
    "write_jsonl",
]


def _encode(value: Any) -> JSON:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _encode(v) for k, v in value.items()}
    return value


def _dt(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


class _Record:
    def to_dict(self) -> dict[str, JSON]:
        """Return a JSON-ready dict (datetimes as ISO strings, tuples as lists)."""
        encoded: dict[str, JSON] = _encode(self)  # a dataclass encodes to a JSON object
        return encoded

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, allow_nan=False, sort_keys=True)


@dataclass(frozen=True)
class Turn(_Record):
    """One utterance. ``labels`` holds per-turn annotations, e.g. LUFY importance per annotator."""

    turn_id: str
    speaker: str
    text: str
    labels: dict[str, JSON] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: dict[str, JSON]) -> Turn:
        return cls(d["turn_id"], d["speaker"], d["text"], dict(d.get("labels") or {}))


@dataclass(frozen=True)
class Session(_Record):
    """One conversation session; ``index`` is 1-based; ``start`` is simulated time.

    ``gold`` holds the dataset's own supervision for this session, e.g. ``summary`` (list of
    sentences), ``persona`` ({speaker: [facts]}), ``memory`` (CareCall memory before the session).
    """

    session_id: str
    index: int
    start: datetime | None
    turns: tuple[Turn, ...]
    gold: dict[str, JSON] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: dict[str, JSON]) -> Session:
        return cls(
            d["session_id"],
            int(d["index"]),
            _dt(d.get("start")),
            tuple(Turn.from_dict(t) for t in d["turns"]),
            dict(d.get("gold") or {}),
        )


@dataclass(frozen=True)
class QAItem(_Record):
    """A probing question; it may be asked only after session ``after_session`` (leak guard)."""

    qa_id: str
    question: str
    answers: tuple[str, ...]
    after_session: int
    evidence: tuple[str, ...] = ()
    kind: str = "probe"
    meta: dict[str, JSON] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: dict[str, JSON]) -> QAItem:
        return cls(
            d["qa_id"],
            d["question"],
            tuple(d.get("answers") or ()),
            int(d["after_session"]),
            tuple(d.get("evidence") or ()),
            d.get("kind", "probe"),
            dict(d.get("meta") or {}),
        )


@dataclass(frozen=True)
class Episode(_Record):
    """A multi-session conversation between ``speakers`` with its probing questions."""

    episode_id: str
    dataset: str
    speakers: tuple[str, ...]
    sessions: tuple[Session, ...]
    qa: tuple[QAItem, ...] = ()
    meta: dict[str, JSON] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: dict[str, JSON]) -> Episode:
        return cls(
            d["episode_id"],
            d["dataset"],
            tuple(d["speakers"]),
            tuple(Session.from_dict(s) for s in d["sessions"]),
            tuple(QAItem.from_dict(q) for q in d.get("qa") or ()),
            dict(d.get("meta") or {}),
        )

    def turns(self) -> Iterator[Turn]:
        """Yield every turn of every session in order."""
        for session in self.sessions:
            yield from session.turns


@dataclass(frozen=True)
class MemoryItem(_Record):
    """One entry of a memory store, as ``snapshot`` returns it and ``Recall.items`` shows it.

    Fields:
        item_id: stable id of the memory within the episode (e.g. ``"<session id>/m0"``); the
            same id in two snapshots is the same memory (updated, moved), so choose it when the
            memory is written, never from its position in a list.
        text: what the generator is shown (``Recall.text`` is usually built from it); under the
            ``extractive`` generator a response is one line of some recalled item's text
            (``MemoryMethod.offline_response``), so raw turns here score well on ROUGE/BLEU.
        kind: what sort of memory it is: ``utterance_pair`` | ``summary`` | ``fact`` |
            ``profile`` | ``thought`` | ``event`` (or a method's own word); tables and the
            report group by it (LUFY's fit reads only ``utterance_pair``).
        created: simulated time of writing (``session.start`` of the session it came from;
            datasets without dates get consecutive days), never the wall clock; None when the
            dataset has no time.
        source_ids: the turn (or session) ids it was derived from. ``Recall.source_ids()``
            puts them in each prediction's ``recalled``, which retrieval metrics score against
            the evidence, the leak test checks (only observed sessions) and ``recallbench
            view`` links to the turns. Leave it empty only for memories with no dialogue
            source (a dataset's gold persona).
        attrs: JSON values of the method's own state: strength, tags, relation edges,
            confidence, status ... (shown in the report, read by method-specific tables).
    """

    item_id: str
    text: str
    kind: str
    created: datetime | None
    source_ids: tuple[str, ...] = ()
    attrs: dict[str, JSON] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: dict[str, JSON]) -> MemoryItem:
        return cls(
            d["item_id"],
            d["text"],
            d["kind"],
            _dt(d.get("created")),
            tuple(d.get("source_ids") or ()),
            dict(d.get("attrs") or {}),
        )


def in_memory(item: MemoryItem, decayed_recallable: bool = False) -> bool:
    """True when a recall can return ``item``: the one meaning of "live". Gone: ``retained:
    false`` (LUFY's forgetting, kept in that session's snapshot), ``deleted`` and any status but
    ``active``/``decayed``; ``decayed`` (TimeRAG) is gone unless ``decayed_recallable``."""
    if item.attrs.get("retained", True) is False:
        return False
    status = item.attrs.get("status")
    return decayed_recallable if status == "decayed" else status in (None, "active")


def decayed_recallable(config: Mapping[str, Any]) -> bool:
    """Whether a run recalls decayed records: its config's ``memory.recency_filter`` is false."""
    memory = config.get("memory")
    return isinstance(memory, Mapping) and memory.get("recency_filter") is False


@dataclass(frozen=True)
class Query(_Record):
    """What a memory method may see when asked to recall: only the past and the present."""

    episode_id: str
    session_index: int
    history: tuple[Turn, ...]
    speaker: str
    now: datetime | None
    question: str | None = None

    @classmethod
    def from_dict(cls, d: dict[str, JSON]) -> Query:
        return cls(
            d["episode_id"],
            int(d["session_index"]),
            tuple(Turn.from_dict(t) for t in d["history"]),
            d["speaker"],
            _dt(d.get("now")),
            d.get("question"),
        )


@dataclass(frozen=True)
class Recall(_Record):
    """Items shown to the generator, their rendered text and anything the method records."""

    items: tuple[MemoryItem, ...] = ()
    text: str = ""
    info: dict[str, JSON] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: dict[str, JSON]) -> Recall:
        return cls(
            tuple(MemoryItem.from_dict(i) for i in d.get("items") or ()),
            d.get("text", ""),
            dict(d.get("info") or {}),
        )

    def source_ids(self) -> tuple[str, ...]:
        """Return the provenance ids of every recalled item, in order, without repeats."""
        return tuple(dict.fromkeys(s for item in self.items for s in item.source_ids))


@dataclass(frozen=True)
class Prediction(_Record):
    """One model output (a response, an answer, a judge verdict ...) with its provenance."""

    pred_id: str
    episode_id: str
    session_index: int
    kind: str
    prompt_hash: str
    output: str
    reference: str | None = None
    recalled: tuple[str, ...] = ()
    usage: dict[str, JSON] = field(default_factory=dict)
    failure: str | None = None
    meta: dict[str, JSON] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: dict[str, JSON]) -> Prediction:
        return cls(
            d["pred_id"],
            d["episode_id"],
            int(d["session_index"]),
            d["kind"],
            d["prompt_hash"],
            d["output"],
            d.get("reference"),
            tuple(d.get("recalled") or ()),
            dict(d.get("usage") or {}),
            d.get("failure"),
            dict(d.get("meta") or {}),
        )


@dataclass(frozen=True)
class Score(_Record):
    """The value of one metric on one prediction."""

    pred_id: str
    metric: str
    value: float
    meta: dict[str, JSON] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: dict[str, JSON]) -> Score:
        return cls(d["pred_id"], d["metric"], float(d["value"]), dict(d.get("meta") or {}))


R = TypeVar("R", covariant=True)


class _Readable(Protocol[R]):
    """A record class: builds an ``R`` from ``to_dict``'s output."""

    def from_dict(self, d: dict[str, JSON]) -> R: ...


def write_jsonl(path: str | Path, records: Iterable[_Record]) -> None:
    """Write records as JSON Lines atomically (temp file + rename)."""
    from recallbench.io import atomic_path

    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8") as fh:
        for record in records:
            fh.write(record.to_json() + "\n")


def read_jsonl(path: str | Path, cls: _Readable[R]) -> list[R]:
    """Read records of type ``cls`` from a JSON Lines file."""
    with Path(path).open(encoding="utf-8") as fh:
        return [cls.from_dict(json.loads(line)) for line in fh if line.strip()]
