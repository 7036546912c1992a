"""Apply a LoCoMo errata file to loaded episodes (``datasets.locomo``, option ``errata``).

Each entry names ``sample_id``, ``question_sha1``, ``field`` (``answer`` | ``evidence``), the
value the release holds (``old_sha1`` of the answer text, or ``old``: the evidence dia ids), the
correction ``new`` and its ``source``. A corrected item records ``meta["erratum"]`` (source, old
and new value); the episode records how many entries of which file it took (``meta["errata"]``).
An entry whose question or old value matches nothing raises: the release changed, or the entry
is wrong, and a silently unapplied correction would misreport the table header.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from recallbench.errors import DatasetFormatError
from recallbench.records import Episode, QAItem

FIELDS = ("answer", "evidence")


def _sha1(text: str) -> str:
    return hashlib.sha1(" ".join(text.split()).encode("utf-8")).hexdigest()


def read_errata(path: Path) -> list[dict[str, Any]]:
    """Read and validate an errata YAML file."""
    if not path.is_file():
        raise DatasetFormatError(f"{path}: LoCoMo errata file not found")
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    entries = data.get("errata") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise DatasetFormatError(f"{path}: expected a mapping with an 'errata' list")
    for k, e in enumerate(entries):
        where = f"{path} errata[{k}]"
        if not isinstance(e, dict):
            raise DatasetFormatError(f"{where}: expected a mapping")
        missing = [
            key for key in ("sample_id", "question_sha1", "field", "new", "source") if key not in e
        ]
        if missing:
            raise DatasetFormatError(f"{where}: missing {missing} (keys: {sorted(e)})")
        if e["field"] not in FIELDS:
            raise DatasetFormatError(
                f"{where}: field should be one of {FIELDS}, got {e['field']!r}"
            )
        old_key = "old_sha1" if e["field"] == "answer" else "old"
        if old_key not in e:
            raise DatasetFormatError(f"{where}: a {e['field']} correction needs '{old_key}'")
    return entries


def apply_errata(episodes: Sequence[Episode], path: Path) -> list[Episode]:
    """Return ``episodes`` with every entry of the errata file applied (see the module doc)."""
    entries = read_errata(path)
    by_sample = {e.meta["sample_id"]: e for e in episodes}
    taken: dict[str, int] = {}
    qa_of: dict[str, list[QAItem]] = {s: list(e.qa) for s, e in by_sample.items()}
    for k, entry in enumerate(entries):
        sample = str(entry["sample_id"])
        if sample not in by_sample:
            continue  # a subset of the conversations: its entries do not apply
        where = f"{path} errata[{k}]"
        items = qa_of[sample]
        hits = [i for i, q in enumerate(items) if _sha1(q.question) == entry["question_sha1"]]
        if not hits:
            raise DatasetFormatError(f"{where}: no question of {sample} has this question_sha1")
        for i in hits:
            items[i] = _correct(items[i], by_sample[sample].episode_id, entry, where)
        taken[sample] = taken.get(sample, 0) + 1
    out = []
    for ep in episodes:
        sample = ep.meta["sample_id"]
        meta = {**ep.meta, "errata": {"file": path.name, "applied": taken.get(sample, 0)}}
        out.append(dataclasses.replace(ep, qa=tuple(qa_of[sample]), meta=meta))
    return out


def _correct(qa: QAItem, eid: str, entry: dict[str, Any], where: str) -> QAItem:
    if entry["field"] == "answer":
        old = qa.answers[0] if qa.answers else ""
        if _sha1(old) != entry["old_sha1"]:
            raise DatasetFormatError(f"{where}: the answer of {qa.qa_id} is not the one corrected")
        new_value: Any = str(entry["new"])
        qa_new = dataclasses.replace(qa, answers=(new_value,))
    else:
        old_ids = tuple(f"{eid}/{d}" for d in entry["old"])
        if qa.evidence != old_ids:
            raise DatasetFormatError(
                f"{where}: the evidence of {qa.qa_id} is {list(qa.evidence)}, not {entry['old']}"
            )
        new_value = [str(d) for d in entry["new"]]
        qa_new = dataclasses.replace(qa, evidence=tuple(f"{eid}/{d}" for d in new_value))
    erratum = {
        "field": entry["field"],
        "new": new_value,
        "source": " ".join(entry["source"].split()),
    }
    return dataclasses.replace(qa_new, meta={**qa.meta, "erratum": erratum})
