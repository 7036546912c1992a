"""Apply LoCoMo errata to loaded episodes (``datasets.locomo``, option ``errata``).

Sources (option ``errata``, several joined by ``+``, e.g. ``default+locomo_audit``):
``default`` (``resources/locomo_errata.yaml``), ``locomo_audit`` (the audit's
``<data_dir>/locomo_audit/errors.json``, read by ``_locomo_audit``), or a path (``.json``: the
audit's format; else the YAML format below).

YAML entry: ``sample_id``, ``question_sha1``, ``field``, the value the release holds, the
correction ``new`` and its ``source``; optional ``score_changing`` (bool). Fields:
``answer`` (``old_sha1`` of the answer text), ``evidence`` (``old``: dia ids), ``category``
(``old``/``new``: 1-4), ``speaker`` (``new: swap``: the question asks about the wrong speaker;
the two speakers' names are exchanged in it, so "A's bowl" becomes "B's bowl" and "did A share
with B" becomes "did B share with A"; the answer stays), ``no_key`` (no usable answer key: the
reference stays the release's, F1 and B1 leave the question out, J keeps it; no ``new``) and
``drop`` (the question is removed; no ``new``). Every field but ``evidence`` changes answer
scores by default.

Combining: the sources are read in the order given. The first source that changes what a
question asks or answers (``answer``, ``speaker``, ``category``, ``no_key``, ``drop``) decides it: a later
source's different change of that question (the same field with another value, or another of
these fields: a swapped speaker and a rewritten answer are two fixes of one error) is not
applied, and the item records one line naming both (``meta["erratum"]["conflicts"]``; the
episode lists them in ``meta["errata"]["conflicts"]``; each is also an
``ErrataConflictWarning``, so a run prints it). Evidence corrections combine the same
way among themselves.
A corrected or flagged item records ``meta["erratum"]``: ``fields`` (per field: old, new,
source), ``sources``, ``score_changing`` and, from the audit, ``error_type`` and ``use`` (how
its correct_answer was used, ``_locomo_audit``). An entry whose
question or old value matches nothing raises: the release changed, or the entry is wrong, and a
silently unapplied correction would misreport the table header.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from recallbench.datasets._locomo_audit import AUDIT_FILE, Fix, read_audit
from recallbench.errors import DatasetFormatError, ErrataConflictWarning
from recallbench.records import Episode, QAItem
from recallbench.store import JSONValue

FIELDS = ("answer", "evidence", "category", "speaker", "no_key", "drop")
SWAP = "swap"
ANSWERING = (
    "answer",
    "speaker",
    "category",
    "no_key",
    "drop",
)  # what changes the question or its key
AUDIT = "locomo_audit"


def _sha1(text: str) -> str:
    return hashlib.sha1(" ".join(text.split()).encode("utf-8")).hexdigest()


def read_errata(path: Path) -> list[dict[str, JSONValue]]:
    """Read and validate an errata YAML file."""
    if not path.is_file():
        raise DatasetFormatError(f"{path}: LoCoMo errata file not found")
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    entries = data.get("errata") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise DatasetFormatError(f"{path}: expected a mapping with an 'errata' list")
    for k, e in enumerate(entries):
        _check_entry(e, f"{path} errata[{k}]")
    checked: list[dict[str, JSONValue]] = entries  # YAML's Any: each entry checked above
    return checked


def _check_entry(e: Any, where: str) -> None:
    if not isinstance(e, dict):
        raise DatasetFormatError(f"{where}: expected a mapping")
    missing = [key for key in ("sample_id", "question_sha1", "field", "source") if key not in e]
    if missing:
        raise DatasetFormatError(f"{where}: missing {missing} (keys: {sorted(e)})")
    if e["field"] not in FIELDS:
        raise DatasetFormatError(f"{where}: field should be one of {FIELDS}, got {e['field']!r}")
    old_key = {"answer": "old_sha1", "drop": None, "speaker": None, "no_key": None}.get(
        e["field"], "old"
    )
    if old_key is not None and old_key not in e:
        raise DatasetFormatError(f"{where}: a {e['field']} correction needs '{old_key}'")
    if e["field"] not in ("drop", "no_key") and "new" not in e:
        raise DatasetFormatError(f"{where}: a {e['field']} correction needs 'new'")
    if e["field"] == "category" and not {e["old"], e["new"]} <= {1, 2, 3, 4}:
        raise DatasetFormatError(f"{where}: category old/new should be 1-4, got {e['old']!r}")
    if e["field"] == "speaker" and e["new"] != SWAP:
        raise DatasetFormatError(
            f"{where}: a speaker correction is 'new: {SWAP}', got {e['new']!r}"
        )


def sources_of(errata: str | Path, data_dir: Path, default: Path) -> list[tuple[str, Path]]:
    """Return (origin, file) per source of an ``errata`` option (``default+locomo_audit``)."""
    out = []
    for part in str(errata).split("+"):
        if part == "default":
            out.append(("default", default))
        elif part == AUDIT:
            out.append((AUDIT, Path(data_dir) / AUDIT / AUDIT_FILE))
        else:
            out.append((Path(part).name, Path(part)))
    return out


def apply_errata(
    episodes: Sequence[Episode],
    sources: Sequence[tuple[str, Path]],
    categories: Mapping[int, str],
) -> list[Episode]:
    """Return ``episodes`` with every source's entries applied (see the module doc).

    ``categories``: the loader's category names by number (a category correction renames).
    """
    fixes: list[Fix] = []
    for origin, path in sources:
        if path.suffix == ".json":
            fixes += read_audit(path, episodes, origin)
        else:
            fixes += _yaml_fixes(path, episodes, origin)
    by_qa: dict[str, list[Fix]] = {}
    for fix in fixes:
        by_qa.setdefault(fix.qa_id, []).append(fix)
    names = [origin for origin, _ in sources]
    out = [_episode(ep, by_qa, names, categories) for ep in episodes]
    for line in (c for ep in out for c in ep.meta["errata"]["conflicts"]):
        warnings.warn(line, ErrataConflictWarning, stacklevel=3)
    return out


def _yaml_fixes(path: Path, episodes: Sequence[Episode], origin: str) -> list[Fix]:
    by_sample = {e.meta["sample_id"]: e for e in episodes}
    out = []
    for k, entry in enumerate(read_errata(path)):
        sample = str(entry["sample_id"])
        if sample not in by_sample:
            continue  # a subset of the conversations: its entries do not apply
        where = f"{path} errata[{k}]"
        ep = by_sample[sample]
        hits = [q for q in ep.qa if _sha1(q.question) == entry["question_sha1"]]
        if not hits:
            raise DatasetFormatError(f"{where}: no question of {sample} has this question_sha1")
        field = str(entry["field"])  # one of FIELDS (``_check_entry``)
        changing = bool(entry.get("score_changing", field != "evidence"))
        source = f"{origin}: {' '.join(str(entry['source']).split())}"
        for qa in hits:
            new = _checked_new(qa, ep, entry, where)
            out.append(Fix(qa.qa_id, field, new, origin, source, changing, None))
    return out


def _checked_new(qa: QAItem, ep: Episode, entry: dict[str, Any], where: str) -> Any:
    """The correction of ``entry`` for ``qa``, after checking the release holds its old value."""
    field, eid = entry["field"], ep.episode_id
    if field == "answer":
        if _sha1(qa.answers[0] if qa.answers else "") != entry["old_sha1"]:
            raise DatasetFormatError(f"{where}: the answer of {qa.qa_id} is not the one corrected")
        return str(entry["new"])
    if field == "evidence":
        if qa.evidence != tuple(f"{eid}/{d}" for d in entry["old"]):
            raise DatasetFormatError(
                f"{where}: the evidence of {qa.qa_id} is {list(qa.evidence)}, not {entry['old']}"
            )
        return [str(d) for d in entry["new"]]
    if field == "category":
        if qa.meta.get("category") != entry["old"]:
            got = qa.meta.get("category")
            raise DatasetFormatError(f"{where}: {qa.qa_id} is category {got}, not {entry['old']}")
        return int(entry["new"])
    if field == "speaker":
        if not any(re.search(rf"\b{re.escape(name)}\b", qa.question) for name in ep.speakers):
            names = " or ".join(ep.speakers)
            raise DatasetFormatError(f"{where}: the question of {qa.qa_id} names neither {names}")
        return SWAP
    return True  # drop, no_key


def _episode(
    ep: Episode, by_qa: dict[str, list[Fix]], names: list[str], categories: Mapping[int, str]
) -> Episode:
    qa_out, conflicts, corrected, dropped = [], [], 0, 0
    for qa in ep.qa:
        fixes = by_qa.get(qa.qa_id, [])
        if not fixes:
            qa_out.append(qa)
            continue
        fixed, lines = _fixed(qa, ep, fixes, categories)
        conflicts += lines
        corrected += 1
        if fixed is None:
            dropped += 1
        else:
            qa_out.append(fixed)
    meta = {
        **ep.meta,
        "errata": {
            "sources": names,
            "applied": corrected,
            "dropped": dropped,
            "conflicts": conflicts,
        },
    }
    return dataclasses.replace(ep, qa=tuple(qa_out), meta=meta)


def _fixed(
    qa: QAItem, ep: Episode, fixes: list[Fix], categories: Mapping[int, str]
) -> tuple[QAItem | None, list[str]]:
    """``qa`` with its fixes applied (None: dropped) and the lines of sources that disagree."""
    chosen: dict[str, Fix] = {}
    lines = []
    for fix in fixes:
        if fix.field == "flag":
            continue
        first = chosen.get(fix.field) or _rival(chosen, fix)
        if first is None:
            chosen[fix.field] = fix
        elif first.new != fix.new or first.field != fix.field:
            what = (
                f"gives {first.new!r}" if first.field == fix.field else f"changes its {first.field}"
            )
            lines.append(
                f"{qa.qa_id} {fix.field}: {first.origin} {what}, {fix.origin} gives "
                f"{fix.new!r}; used {first.origin}"
            )
    erratum: dict[str, Any] = {
        "fields": {},
        "sources": list(dict.fromkeys(f.origin for f in fixes)),
        "score_changing": any(f.score_changing for f in fixes),
    }
    if types := [f.error_type for f in fixes if f.error_type]:
        erratum["error_type"] = types[0]
    if uses := [f.use for f in fixes if f.use]:
        erratum["use"] = uses[0]
    if lines:
        erratum["conflicts"] = lines
    if "drop" in chosen:
        return None, lines
    out = qa
    for field, fix in chosen.items():
        out, old = _change(out, ep, field, fix.new, categories)
        erratum["fields"][field] = {"old": old, "new": fix.new, "source": fix.source}
    return dataclasses.replace(out, meta={**out.meta, "erratum": erratum}), lines


def _rival(chosen: dict[str, Fix], fix: Fix) -> Fix | None:
    """The chosen fix of another source that already changes what ``fix`` would change."""
    if fix.field not in ANSWERING:
        return None
    return next(
        (c for c in chosen.values() if c.field in ANSWERING and c.origin != fix.origin), None
    )


def _change(
    qa: QAItem, ep: Episode, field: str, new: Any, categories: Mapping[int, str]
) -> tuple[QAItem, Any]:
    """``qa`` with ``field`` set to ``new``, and the value it held."""
    eid = ep.episode_id
    if field == "answer":
        return dataclasses.replace(qa, answers=(new,)), qa.answers[0]
    if field == "no_key":  # the reference stays; scoring reads the erratum (``no_key``)
        return qa, qa.answers[0] if qa.answers else ""
    if field == "evidence":
        old = [e.removeprefix(f"{eid}/") for e in qa.evidence]
        return dataclasses.replace(qa, evidence=tuple(f"{eid}/{d}" for d in new)), old
    if field == "category":
        meta = {**qa.meta, "category": new, "category_name": categories[new]}
        return dataclasses.replace(qa, kind=categories[new], meta=meta), qa.meta["category"]
    a, b = ep.speakers
    swapped = {a: b, b: a}
    pattern = rf"\b({re.escape(a)}|{re.escape(b)})\b"
    question = re.sub(pattern, lambda m: swapped[m.group(1)], qa.question)
    return dataclasses.replace(qa, question=question), qa.question
