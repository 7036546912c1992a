"""The GVD answer key (``datasets.gvd``'s ``answer_key`` option): reading and checking a JSONL
key, matching its entries to the questions, and turning them into keyed ``QAItem``s with
evidence turn ids. The key's format is described in ``recallbench.datasets.gvd``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

from recallbench.errors import ConfigError, DatasetFormatError
from recallbench.records import Episode, QAItem

RESOURCES = Path(__file__).resolve().parents[1] / "resources"
DEFAULT_KEYS = {"en": RESOURCES / "gvd_answer_key_en.jsonl"}
_KEY_FIELDS = ("user", "qid", "answer", "answerable", "evidence")  # + question or question_sha1
_KEY_TYPES = {
    "user": "a string",
    "qid": "an int",
    "question": "a string",
    "answer": "a string or a list of strings",
    "answerable": "a bool",
    "evidence": "a list",
    "keywords": "a list of strings",
    "type": "a string",
}
_EVIDENCE = '{"date": "YYYY-MM-DD", "turn": <0-based pair index>}'


def _clean_question(text: str) -> str:
    text = " ".join(text.split())
    if len(text) >= 2 and text[0] == text[-1] == '"' and '"' not in text[1:-1]:
        text = text[1:-1].strip()
    return text


def _key_path(answer_key: str | Path, language: str) -> Path:
    if str(answer_key) != "default":
        return Path(answer_key)
    if language not in DEFAULT_KEYS:
        raise ConfigError(
            f"no shipped GVD answer key for language {language!r} "
            f"(shipped: {sorted(DEFAULT_KEYS)}); pass answer_key=<path to a JSONL key>"
        )
    return DEFAULT_KEYS[language]


def _apply_key(episodes: dict[str, Episode], path: Path) -> dict[str, Episode]:
    if not path.is_file():
        raise DatasetFormatError(f"{path}: answer key file not found")
    updates: dict[str, dict[int, QAItem]] = {}
    for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path} line {line_no}"
        entry = _key_entry(line, where)
        episode = episodes.get(entry["user"])
        if episode is None:
            raise DatasetFormatError(
                f"{where}: unknown user {entry['user']!r} (users: {sorted(episodes)})"
            )
        qid = entry["qid"]
        if not 0 <= qid < len(episode.qa):
            raise DatasetFormatError(
                f"{where}: qid {qid} out of range "
                f"(user {entry['user']!r} has {len(episode.qa)} questions)"
            )
        item = episode.qa[qid]
        if not _same_question(entry, item.question):
            shown = entry.get("question", entry.get("question_sha1"))
            raise DatasetFormatError(
                f"{where}: question {shown!r} does not match question {qid} of "
                f"{entry['user']!r}: {item.question!r}"
            )
        if qid in updates.setdefault(entry["user"], {}):
            raise DatasetFormatError(f"{where}: user {entry['user']!r} qid {qid} answered twice")
        updates[entry["user"]][qid] = _keyed_item(item, entry, episode, where, path.name)
    out = {}
    for name, episode in episodes.items():
        new = updates.get(name, {})
        qa = tuple(new.get(j, item) for j, item in enumerate(episode.qa))
        out[name] = dataclasses.replace(episode, qa=qa)
    return out


def question_sha1(question: str) -> str:
    """Return the sha1 of a cleaned, whitespace-normalized question (for keys that ship no text)."""
    return hashlib.sha1(" ".join(_clean_question(question).split()).encode("utf-8")).hexdigest()


def _same_question(entry: dict[str, Any], question: str) -> bool:
    if "question" in entry:
        return _clean_question(entry["question"]) == question
    return str(entry["question_sha1"]) == question_sha1(question)


def _is_str_list(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _key_entry(line: str, where: str) -> dict[str, Any]:
    try:
        entry = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DatasetFormatError(f"{where}: invalid JSON ({exc.msg})") from exc
    if not isinstance(entry, dict):
        raise DatasetFormatError(f"{where}: expected a JSON object")
    missing = [k for k in _KEY_FIELDS if k not in entry]
    if "question" not in entry and "question_sha1" not in entry:
        missing.append("question")
    if missing:
        raise DatasetFormatError(f"{where}: missing field(s) {missing} (required: {_KEY_FIELDS})")
    checks = {
        "user": isinstance(entry["user"], str),
        "qid": isinstance(entry["qid"], int) and not isinstance(entry["qid"], bool),
        "question": isinstance(entry.get("question", entry.get("question_sha1")), str),
        "answer": isinstance(entry["answer"], str) or _is_str_list(entry["answer"]),
        "answerable": isinstance(entry["answerable"], bool),
        "evidence": isinstance(entry["evidence"], list),
        "keywords": _is_str_list(entry.get("keywords", [])),
        "type": isinstance(entry.get("type", ""), str),
    }
    for field, ok in checks.items():
        if not ok:
            raise DatasetFormatError(
                f"{where}: {field!r} must be {_KEY_TYPES[field]}, got {entry.get(field)!r}"
            )
    answers = [entry["answer"]] if isinstance(entry["answer"], str) else entry["answer"]
    entry["answers"] = tuple(a.strip() for a in answers if a.strip())
    if entry["answerable"] and not entry["answers"]:
        raise DatasetFormatError(f"{where}: 'answer' is empty but 'answerable' is true")
    return entry


def _evidence_ids(entry: dict[str, Any], episode: Episode, where: str) -> list[str]:
    sessions = {s.session_id.rsplit("/", 1)[1]: s for s in episode.sessions}
    ids: list[str] = []
    for ev in entry["evidence"]:
        if not (isinstance(ev, dict) and isinstance(ev.get("date"), str)):
            raise DatasetFormatError(f"{where}: evidence item {ev!r} must be {_EVIDENCE}")
        if not isinstance(ev.get("turn"), int) or isinstance(ev["turn"], bool):
            raise DatasetFormatError(f"{where}: evidence item {ev!r} must be {_EVIDENCE}")
        session = sessions.get(ev["date"])
        if session is None:
            raise DatasetFormatError(
                f"{where}: unknown date {ev['date']!r} for user {entry['user']!r} "
                f"(dates: {sorted(sessions)})"
            )
        pairs = len(session.turns) // 2
        if not 0 <= ev["turn"] < pairs:
            raise DatasetFormatError(
                f"{where}: turn {ev['turn']} out of range on {ev['date']} ({pairs} pairs)"
            )
        pair = f"{session.session_id}/p{ev['turn']}"
        ids += [f"{pair}/query", f"{pair}/response"]
    return ids


def _keyed_item(
    item: QAItem, entry: dict[str, Any], episode: Episode, where: str, key_name: str
) -> QAItem:
    evidence = tuple(_evidence_ids(entry, episode, where))
    meta = dict(item.meta) | {
        "answerable": entry["answerable"],
        "keywords": list(entry.get("keywords", [])),
        "type": entry.get("type", ""),
        "answer_key": key_name,
    }
    return dataclasses.replace(item, answers=entry["answers"], evidence=evidence, meta=meta)
