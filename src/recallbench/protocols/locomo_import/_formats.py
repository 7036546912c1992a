"""Readers of published LoCoMo answer files: one ``AnswerFile`` whatever the source's shape.

Formats (``FORMATS``; the shapes are described in ``docs/import_answers.md``):

- ``locomo-audit``: dial481/locomo-audit's ``eval_results.json`` (``detailed_results`` keyed
  ``locomo_exp_user_<i>``, items with ``question_id`` ``locomo_<i>_qa<j>``: j indexes the
  conversation's FULL ``qa`` list; three ``llm_judgments`` per item; ``category`` a string);
- ``zep``: getzep/zep-papers' ``zep_locomo_grades.json`` or ``zep_locomo_responses.json``
  (``locomo_experiment_user_<i>``: the conversation's category 1-4 questions in release order;
  ``grade`` one verdict, ``duration_ms`` the latency, in the responses file);
- ``mem0``: what mem0ai/mem0's ``evaluation/evals.py`` writes (``{"<i>": [{"question",
  "answer", "response", "category" (a string), "bleu_score", "f1_score", "llm_score" (0/1)}]}``:
  the conversation's index in ``locomo10.json`` as key, category 5 skipped, the rest in order);
- ``memobase``: Memobase's published run (memodb-io/memobase ``docs/experiments/locomo-benchmark``,
  a fork of mem0's evaluation): the ``mem0`` shape, read by the same reader; its own judge name
  (``j_memobase``) and its README's naming of the category numbers;
- ``jsonl``: one ``{"question_id", "answer"[, "verdicts", "question", "category",
  "duration_ms"]}`` per line for anyone's system; ``question_id`` in the audit's scheme
  (``locomo_<i>_qa<j>``) or the harness's (``locomo/conv-26/q3``).

Every error is one line naming the file, the item and what was expected.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recallbench.errors import DatasetFormatError, did_you_mean
from recallbench.protocols.locomo_import._fields import category_of, fail, field, load_json

# The release's conversations in the order every source numbers them (SOURCE.md of both folders).
RELEASE_ORDER = (
    "conv-26",
    "conv-30",
    "conv-41",
    "conv-42",
    "conv-43",
    "conv-44",
    "conv-47",
    "conv-48",
    "conv-49",
    "conv-50",
)
# How each source names the release's category numbers 1-4 (three incompatible namings).
CATEGORY_NAMING: dict[str, dict[int, str]] = {
    "locomo-audit": {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"},
    "zep": {1: "Multi-Hop", 2: "Open Domain", 3: "Temporal", 4: "Single-Hop"},
    "mem0": {1: "Single Hop", 2: "Temporal", 3: "Multi-Hop", 4: "Open Domain"},
    "memobase": {1: "single_hop", 2: "temporal", 3: "multi_hop", 4: "open_domain"},
    "jsonl": {},
}
# The shipped verdicts' judge, named for its source (metric ``j_<source>``).
JUDGE_OF = {
    "locomo-audit": "audit",
    "zep": "zep",
    "mem0": "mem0",
    "memobase": "memobase",
    "jsonl": "shipped",
}
_AUDIT_ID = re.compile(r"locomo_(\d+)_qa(\d+)")
_OUR_ID = re.compile(r"locomo/(conv-\d+)/q(\d+)")


@dataclass(frozen=True)
class ImportedAnswer:
    """One published answer, located by id (``qa_index``) or by order (``position``)."""

    where: str  # "<file> <container>[<n>]" or "<file> line <n>": for error messages
    item_id: str  # the source's id of the item (its question_id, or where)
    conversation: int  # index in RELEASE_ORDER
    answer: str
    qa_index: int | None = None  # index in the conversation's full qa list
    position: int | None = None  # index among the conversation's category 1-4 questions
    question: str | None = None
    category: int | None = None
    verdicts: tuple[bool, ...] = ()
    duration_ms: float | None = None


@dataclass(frozen=True)
class AnswerFile:
    """A published answer file read into answers (``scheme``: matched by "id" or "order")."""

    path: Path
    format: str
    scheme: str
    answers: tuple[ImportedAnswer, ...]
    containers: tuple[int, ...]  # the conversations the file has a container for


def _containers(data: Any, where: str, pattern: str) -> Iterator[tuple[int, str, list[Any]]]:
    """(conversation index, key, items) of a ``{<prefix><i>: [...]}`` mapping, checked."""
    if not isinstance(data, dict):
        raise fail(where, f"expected an object keyed {pattern}, got {type(data).__name__}")
    rx = re.compile(pattern.replace("<i>", r"(\d+)") + "$")
    for key, items in data.items():
        m = rx.match(str(key))
        if m is None or int(m.group(1)) >= len(RELEASE_ORDER):
            raise fail(
                f"{where} {key!r}",
                f"not a conversation of the release (expected {pattern} with i = 0-"
                f"{len(RELEASE_ORDER) - 1})",
            )
        if not isinstance(items, list):
            raise fail(f"{where} {key!r}", f"expected a list, got {type(items).__name__}")
        yield int(m.group(1)), str(key), items


def _audit(data: Any, name: str) -> list[ImportedAnswer]:
    results = field(data, "detailed_results", dict, name)
    out = []
    for conv, key, items in _containers(results, name, "locomo_exp_user_<i>"):
        for n, rec in enumerate(items):
            where = f"{name} {key}[{n}]"
            qid = str(field(rec, "question_id", str, where))
            m = _AUDIT_ID.fullmatch(qid)
            if m is None or int(m.group(1)) != conv:
                raise fail(where, f"question_id {qid!r} is not locomo_{conv}_qa<j>")
            judgments = field(rec, "llm_judgments", dict, where)
            verdicts = tuple(
                bool(field(judgments, k, bool, f"{where} llm_judgments")) for k in judgments
            )
            out.append(
                ImportedAnswer(
                    where=where,
                    item_id=qid,
                    conversation=conv,
                    answer=str(field(rec, "generated_answer", (str, int, float), where)),
                    qa_index=int(m.group(2)),
                    question=field(rec, "question", str, where),
                    category=category_of(field(rec, "category", (str, int), where), where),
                    verdicts=verdicts,
                )
            )
    return out


def _zep(data: Any, name: str) -> list[ImportedAnswer]:
    out = []
    for conv, key, items in _containers(data, name, "locomo_experiment_user_<i>"):
        for n, rec in enumerate(items):
            where = f"{name} {key}[{n}]"
            grade = rec.get("grade") if isinstance(rec, dict) else None
            if grade is not None and not isinstance(grade, bool):
                raise fail(where, f"'grade' should be true or false, got {grade!r}")
            ms = rec.get("duration_ms") if isinstance(rec, dict) else None
            if ms is not None and (isinstance(ms, bool) or not isinstance(ms, int | float)):
                raise fail(where, f"'duration_ms' should be a number, got {ms!r}")
            number = rec.get("category") if isinstance(rec, dict) else None
            out.append(
                ImportedAnswer(
                    where=where,
                    item_id=f"{key}[{n}]",
                    conversation=conv,
                    answer=str(field(rec, "answer", (str, int, float), where)),
                    position=n,
                    question=field(rec, "question", str, where),
                    category=None if number is None else category_of(number, where),
                    verdicts=() if grade is None else (grade,),
                    duration_ms=None if ms is None else float(ms),
                )
            )
    return out


def _mem0(data: Any, name: str) -> list[ImportedAnswer]:
    out = []
    for conv, key, items in _containers(data, name, "<i>"):
        for n, rec in enumerate(items):
            where = f"{name} {key!r}[{n}]"
            score = field(rec, "llm_score", (int, float), where)
            if score not in (0, 1):
                raise fail(where, f"'llm_score' should be 0 or 1, got {score!r}")
            out.append(
                ImportedAnswer(
                    where=where,
                    item_id=f"{key}[{n}]",
                    conversation=conv,
                    answer=str(field(rec, "response", (str, int, float), where)),
                    position=n,
                    question=field(rec, "question", str, where),
                    category=category_of(field(rec, "category", (str, int), where), where),
                    verdicts=(bool(score),),
                )
            )
    return out


def _jsonl_id(qid: str, where: str) -> tuple[int, int]:
    if m := _AUDIT_ID.fullmatch(qid):
        conv, index = int(m.group(1)), int(m.group(2))
    elif (m := _OUR_ID.fullmatch(qid)) and m.group(1) in RELEASE_ORDER:
        conv, index = RELEASE_ORDER.index(m.group(1)), int(m.group(2))
    else:
        raise fail(where, f"question_id {qid!r}: expected locomo_<i>_qa<j> or locomo/conv-26/q<j>")
    if conv >= len(RELEASE_ORDER):
        raise fail(where, f"question_id {qid!r}: conversation {conv} is not in the release (0-9)")
    return conv, index


def _jsonl_record(rec: Any, where: str) -> ImportedAnswer:
    qid = str(field(rec, "question_id", str, where))
    conv, index = _jsonl_id(qid, where)
    verdicts = rec.get("verdicts", [])
    if not isinstance(verdicts, list) or not all(isinstance(v, bool) for v in verdicts):
        raise fail(where, f"'verdicts' should be a list of true/false, got {verdicts!r}")
    ms = rec.get("duration_ms")
    if ms is not None and (isinstance(ms, bool) or not isinstance(ms, int | float)):
        raise fail(where, f"'duration_ms' should be a number, got {ms!r}")
    question = rec.get("question")
    return ImportedAnswer(
        where=where,
        item_id=qid,
        conversation=conv,
        answer=str(field(rec, "answer", (str, int, float), where)),
        qa_index=index,
        question=None if question is None else str(question),
        category=None if rec.get("category") is None else category_of(rec["category"], where),
        verdicts=tuple(verdicts),
        duration_ms=None if ms is None else float(ms),
    )


def _read_jsonl(path: Path, name: str) -> list[ImportedAnswer]:
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{name} line {number}"
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            hint = _jsonl_hint(path) if number == 1 else ""
            raise fail(
                where, f"invalid JSON ({exc.msg}): expected one object per line{hint}"
            ) from None
        out.append(_jsonl_record(rec, where))
    return out


READERS: dict[str, Callable[[Any, str], list[ImportedAnswer]]] = {
    "locomo-audit": _audit,
    "zep": _zep,
    "mem0": _mem0,
    "memobase": _mem0,  # a fork of mem0's evals.py: the same file shape
}
FORMATS = (*READERS, "jsonl")
SCHEME = {"locomo-audit": "id", "zep": "order", "mem0": "order", "memobase": "order", "jsonl": "id"}
_SHAPE = {"memobase": "mem0"}  # formats whose files have another format's shape


def read_answer_file(path: str | Path, fmt: str) -> AnswerFile:
    """Read a published answer file in format ``fmt`` (``FORMATS``); errors name file and item."""
    if fmt not in FORMATS:
        raise did_you_mean("answer file format", fmt, FORMATS)
    path = Path(path)
    name = path.name
    if not path.is_file():
        raise DatasetFormatError(f"{path}: no such answer file")
    if fmt == "jsonl":
        answers = _read_jsonl(path, name)
    else:
        answers = _read_shaped(load_json(path, name), fmt, name)
    if not answers:
        raise fail(name, f"no answers read (is it a {fmt} file?)")
    containers = tuple(sorted({a.conversation for a in answers}))
    return AnswerFile(path, fmt, SCHEME[fmt], tuple(answers), containers)


def _read_shaped(data: Any, fmt: str, name: str) -> list[ImportedAnswer]:
    """Read a JSON file of one of the shaped formats; a file of another format says so."""
    try:
        return READERS[fmt](data, name)
    except DatasetFormatError as exc:
        guess = _guess(data)
        if guess is not None and guess != _SHAPE.get(fmt, fmt):
            raise fail(name, f"looks like a {guess} file, not {fmt} (--format {guess})") from exc
        raise


def _jsonl_hint(path: Path) -> str:
    """Say which format a whole-JSON file given as jsonl looks like."""
    try:
        guess = _guess(json.loads(path.read_text(encoding="utf-8")))
    except json.JSONDecodeError:
        return ""
    return f"; it looks like a {guess} file (--format {guess})" if guess else ""


def _guess(data: Any) -> str | None:
    """The format a parsed JSON file looks like (None: none of them)."""
    if isinstance(data, dict) and "detailed_results" in data:
        return "locomo-audit"
    keys = [str(k) for k in data] if isinstance(data, dict) else []
    if keys and all(k.startswith("locomo_experiment_user_") for k in keys):
        return "zep"
    if keys and all(k.isdigit() for k in keys):
        return "mem0"
    return None
