"""TimeRAG-Memory's structured record (Sun et al., Table II) and its store of versions."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from datetime import datetime

from recallbench.records import MemoryItem
from recallbench.store import JSONValue

ACTIVE, DECAYED, DELETED = "active", "decayed", "deleted"
STATUSES = (ACTIVE, DECAYED, DELETED)


def record_text(speaker: str, slot_type: str, polarity: str, value: str) -> str:
    """``<speaker> <slot words>: <value>`` (``not `` before a negative value): ``MemoryRecord.text``."""
    negation = "not " if polarity == "-" else ""
    return f"{speaker} {slot_type.replace('.', ' ')}: {negation}{value}"


@dataclass(frozen=True)
class MemoryRecord:
    """One record of Table II: ``slot_type``, canonical ``value``, ``polarity`` (+/-),
    ``timestamp`` (write time; the simulated clock), ``confidence`` (the writing gate's score),
    ``support`` (ids of the utterances it came from), ``status`` (active|decayed|deleted).

    Also: ``speaker`` (whose attribute it is: MSC has two users), ``session_index`` (the write
    session, for time in sessions), ``provenance`` (why the status changed: overwrite, decay,
    budget, deletion request with its utterance id).
    """

    record_id: str
    slot_type: str
    value: str
    polarity: str
    timestamp: datetime | None
    confidence: float
    support: tuple[str, ...]
    speaker: str
    session_index: int
    status: str = ACTIVE
    provenance: tuple[dict[str, JSONValue], ...] = field(default_factory=tuple)

    def key(self) -> tuple[str, str]:
        """Records of one speaker and slot compete (conflict detection, overwrite)."""
        return self.speaker, self.slot_type

    def same_fact(self, other: MemoryRecord) -> bool:
        return self.key() == other.key() and (self.value, self.polarity) == (
            other.value,
            other.polarity,
        )

    def with_status(self, status: str, **why: JSONValue) -> MemoryRecord:
        """A copy with ``status`` and a provenance entry saying why."""
        return replace(
            self, status=status, provenance=(*self.provenance, {"status": status, **why})
        )

    def text(self) -> str:
        """Natural-language rendering used for similarity: ``<speaker> <slot words>: <value>``."""
        return record_text(self.speaker, self.slot_type, self.polarity, self.value)

    def to_item(self) -> MemoryItem:
        return MemoryItem(
            self.record_id,
            self.text(),
            "fact",
            self.timestamp,
            self.support,
            {
                "slot_type": self.slot_type,
                "value": self.value,
                "polarity": self.polarity,
                "confidence": round(self.confidence, 6),
                "status": self.status,
                "speaker": self.speaker,
                "session_index": self.session_index,
                "provenance": list(self.provenance),
            },
        )


def elapsed(record: MemoryRecord, now: datetime | None, session_index: int, unit: str) -> float:
    """Time since the record was written: days on the simulated clock (``unit="days"``), or
    sessions (``"sessions"``, and whenever a timestamp is missing)."""
    if unit == "days" and record.timestamp is not None and now is not None:
        return max(0.0, (now - record.timestamp).total_seconds() / 86400.0)
    return float(max(0, session_index - record.session_index))


def time_weight(dt: float, lam: float) -> float:
    """``w_time(m) = exp(-lambda * dt)`` (sec. 3.3)."""
    return math.exp(-lam * dt)
