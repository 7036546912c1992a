"""LongMemEval errata as data: reported answer-key problems, checked, and the clean subset.

Option ``errata`` (``protocol.errata`` of ``longmemeval_import``; any LongMemEval protocol reads
it the same way): null (the release as is: no ``clean`` subset), ``default``
(``recallbench/resources/longmemeval_errata.yaml``: the threads of xiaowu0162/LongMemEval, each
checked against the cleaned release; that file's header says how) or a path to a file in the
same format. Several sources join with ``+`` (``default+mine.yaml``); the first that lists a
question decides it (a later entry of the same question is recorded as a conflict, not applied).

Entry fields: ``question_id``; ``field`` (``answer``: the key; ``evidence``: the
``answer_session_ids`` / ``has_answer`` labels; ``question``: its text); ``applies`` (true: the
problem is in the cleaned release); ``score_changing`` (true: the QA key is in doubt); ``thread``
(what the report says, in its words); ``data`` (what the files show); ``sources`` (URLs).

The clean subset: a question is *flagged* when an entry that applies and is score-changing
lists it; every other question is ``clean``. ``subsets(question_id)`` is ``["clean"]`` or ``[]``
(empty without errata, so a run without errata has no clean subset). No answer is rewritten:
``meta(question_id)`` is what a prediction records (``meta["erratum"]``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from recallbench.errors import DatasetFormatError
from recallbench.store import JSONValue

DEFAULT_ERRATA = Path(__file__).resolve().parents[1] / "resources" / "longmemeval_errata.yaml"
FIELDS = ("answer", "evidence", "question")
CLEAN = "clean"
_REQUIRED: dict[str, type | tuple[type, ...]] = {
    "question_id": str,
    "field": str,
    "applies": bool,
    "score_changing": bool,
    "thread": str,
    "data": str,
    "sources": list,
}


@dataclass(frozen=True)
class Erratum:
    """One checked report about one question (module docstring for the fields)."""

    question_id: str
    field: str
    applies: bool
    score_changing: bool
    thread: str
    data: str
    sources: tuple[str, ...]
    origin: str  # the errata source it came from ("default" or the file's path)

    @property
    def flags(self) -> bool:
        """Whether it takes its question out of the clean subset."""
        return self.applies and self.score_changing

    def to_dict(self) -> dict[str, JSONValue]:
        """What a prediction records of it, in the shape of ``payloads.ErratumMeta``.

        ``sources``: the errata source; ``error_type``: the field reported and whether the
        report applies to the cleaned release; ``score_changing``: whether it flags the question.
        """
        applies = "applies" if self.applies else "does not apply to the cleaned release"
        return {
            "sources": [self.origin],
            "error_type": f"{self.field} ({applies})",
            "score_changing": self.flags,
        }


@dataclass(frozen=True)
class Errata:
    """The errata of a run: the entries by question id, and the conflicts between sources."""

    spec: str | None
    entries: dict[str, Erratum] = field(default_factory=dict)
    conflicts: tuple[str, ...] = ()

    def flagged(self, question_id: str) -> bool:
        """Whether an applying, score-changing entry lists the question."""
        entry = self.entries.get(question_id)
        return entry is not None and entry.flags

    def subsets(self, question_id: str) -> list[str]:
        """``["clean"]`` for an unflagged question of a run under errata, else ``[]``."""
        return [] if self.spec is None or self.flagged(question_id) else [CLEAN]

    def meta(self, question_id: str) -> dict[str, JSONValue]:
        """``{"erratum": ...}`` for a listed question, else ``{}``."""
        entry = self.entries.get(question_id)
        return {} if entry is None else {"erratum": entry.to_dict()}

    def describe(self, question_ids: set[str]) -> dict[str, JSONValue]:
        """What a run summary says: the source, the entries and which questions it flagged."""
        flagged: list[JSONValue] = [q for q in sorted(question_ids) if self.flagged(q)]
        listed: list[JSONValue] = [q for q in sorted(question_ids) if q in self.entries]
        return {
            "source": self.spec,
            "entries": len(self.entries),
            "flagging": sum(1 for e in self.entries.values() if e.flags),
            "listed_in_run": listed,
            "flagged_in_run": flagged,
            "clean": len(question_ids) - len(flagged),
            "conflicts": [*self.conflicts],
        }


def _entry(raw: Any, where: str, origin: str) -> Erratum:
    if not isinstance(raw, Mapping):
        raise DatasetFormatError(f"{where}: expected a mapping, got {type(raw).__name__}")
    for key, types in _REQUIRED.items():
        if key not in raw:
            raise DatasetFormatError(f"{where}: {key!r} missing (keys: {sorted(raw)})")
        if not isinstance(raw[key], types):
            raise DatasetFormatError(f"{where}: {key!r} should be {types}, got {raw[key]!r:.60}")
    if raw["field"] not in FIELDS:
        raise DatasetFormatError(f"{where}: field should be one of {FIELDS}, got {raw['field']!r}")
    sources = tuple(str(s) for s in raw["sources"])
    if not sources:
        raise DatasetFormatError(f"{where}: 'sources' is empty: every entry names its report")
    return Erratum(
        question_id=raw["question_id"],
        field=raw["field"],
        applies=raw["applies"],
        score_changing=raw["score_changing"],
        thread=raw["thread"].strip(),
        data=raw["data"].strip(),
        sources=sources,
        origin=origin,
    )


def read_errata(path: Path, origin: str | None = None) -> list[Erratum]:
    """Read and check one errata file; errors name the file and the entry."""
    if not path.is_file():
        raise DatasetFormatError(f"{path}: LongMemEval errata file not found")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise DatasetFormatError(f"{path}: not valid YAML ({exc})".splitlines()[0]) from None
    entries = data.get("errata") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise DatasetFormatError(f"{path}: expected a mapping with an 'errata' list")
    out = [_entry(e, f"{path} errata[{k}]", origin or str(path)) for k, e in enumerate(entries)]
    seen: dict[str, int] = {}
    for k, e in enumerate(out):
        if e.question_id in seen:
            raise DatasetFormatError(
                f"{path} errata[{k}]: question {e.question_id} listed twice "
                f"(first at errata[{seen[e.question_id]}])"
            )
        seen[e.question_id] = k
    return out


def load_errata(spec: str | None) -> Errata:
    """The errata named by ``spec`` (None, ``default``, a path, or several joined by ``+``)."""
    if spec is None or str(spec).strip() in ("", "null", "none"):
        return Errata(None)
    entries: dict[str, Erratum] = {}
    conflicts: list[str] = []
    for part in str(spec).split("+"):
        name = part.strip()
        path = DEFAULT_ERRATA if name == "default" else Path(name)
        for e in read_errata(path, "default" if name == "default" else str(path)):
            first = entries.get(e.question_id)
            if first is None:
                entries[e.question_id] = e
            elif (first.applies, first.score_changing) != (e.applies, e.score_changing):
                conflicts.append(
                    f"{e.question_id}: {first.origin} (applies {first.applies}, score_changing "
                    f"{first.score_changing}) kept over {e.origin} (applies {e.applies}, "
                    f"score_changing {e.score_changing})"
                )
    return Errata(str(spec), entries, tuple(conflicts))
