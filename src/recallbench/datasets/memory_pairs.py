"""Labelled (memory, summary) pairs for the pairwise memory-operation accuracy (Bae et al. 2022).

Sources (``recallbench/resources/memory_pairs/``, provenance in its README.md):

- ``table7``: the 14 pairs of Bae et al.'s Table 7 (their English translation), labels as printed;
- ``own_ko``: 16 Korean pairs written for recallbench (not from CareCall_mem);
- ``own_en``: 10 English pairs written for recallbench.

A line is ``{"memory": str, "summary": str, "label": "PASS"|"REPLACE"|"APPEND"|"DELETE"}``;
``load(source)`` or ``load(path=...)`` for a file of your own in that format.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from recallbench.datasets._common import iter_jsonl
from recallbench.errors import DataNotFoundError, DatasetFormatError, did_you_mean
from recallbench.store import JSONValue

RESOURCES = Path(__file__).resolve().parents[1] / "resources" / "memory_pairs"
SOURCES = {
    "table7": "table7_en.jsonl",
    "own_ko": "own_ko.jsonl",
    "own_en": "own_en.jsonl",
}
LABELS = ("PASS", "REPLACE", "APPEND", "DELETE")


@dataclass(frozen=True)
class Pair:
    """One labelled (memory, summary) pair; ``pair_id`` is ``<source>:<line>``."""

    pair_id: str
    source: str
    memory: str
    summary: str
    label: str


def _text(record: dict[str, JSONValue], key: str, where: str) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not value.strip():
        raise DatasetFormatError(f"{where}: {key!r} should be a non-empty string, got {value!r}")
    return value


def load(source: str | None = None, *, path: str | Path | None = None) -> list[Pair]:
    """Return the pairs of a named ``source`` (``SOURCES``) or of a JSONL file ``path``."""
    if (source is None) == (path is None):
        raise ValueError("memory_pairs.load: give a source name or a path, not both or neither")
    if path is None:
        if source not in SOURCES:
            raise did_you_mean("memory-pair source", str(source), SOURCES)
        file = RESOURCES / SOURCES[source]
    else:
        file = Path(path)
        source = file.stem
    if not file.is_file():
        raise DataNotFoundError(f"{file}: no such memory-pair file")
    pairs = []
    for where, record in iter_jsonl(file, file.parent):
        n = int(where.rsplit(" ", 1)[1])  # "<file> line <n>"
        memory, summary, label = (_text(record, k, where) for k in ("memory", "summary", "label"))
        if label not in LABELS:
            raise DatasetFormatError(
                f"{where}: label {label!r} should be one of {', '.join(LABELS)}"
            )
        pairs.append(Pair(f"{source}:{n}", str(source), memory, summary, label))
    if not pairs:
        raise DatasetFormatError(f"{file.name}: no pairs")
    return pairs
