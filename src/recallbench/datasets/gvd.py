"""Load GVD, the MemoryBank / SiliconFriend evaluation data (Zhong et al. 2023, arXiv 2305.10250).

Format (``shared/data/gvd/SOURCE.md``; upstream GitHub ``zhongwanjun/MemoryBank-SiliconFriend``,
``eval_data/``, MIT): ``gvd/eval_data/{lang}/memory_bank_{lang}.json`` is one object keyed by user
name, each with ``history`` ({"YYYY-MM-DD": [{"query": user text, "response": AI text}, ...]}) and
``meta_information`` (name, personality, hobbies, speaking_style);
``probing_questions_{lang}.jsonl`` has one line ``{"<user>": [question, ...]}`` per user. GVD
ships no answers.

Records: one Episode per user, id ``gvd-{lang}/{user}``, speakers ``(user, "AI")``, meta =
``meta_information`` plus ``language`` and ``user`` (the user's name; and ``source_key`` when the raw key differed). One Session
per date in date order, id ``gvd-{lang}/{user}/{date}``, starting at ``clock.DAY_START`` that day;
pair ``i`` of a date gives the user turn ``.../p{i}/query`` and the AI turn ``.../p{i}/response``.
Question ``j`` of a user is QAItem ``gvd-{lang}/{user}/q{j}``, asked after the last session.

Answer key (option ``answer_key``: a JSONL path, or "default" for the key shipped in
``recallbench/resources/gvd_answer_key_en.jsonl``): one line per question,
``{"user", "qid" (0-based index in that user's list), "question", "answer", "answerable",
"evidence": [{"date", "turn" (0-based pair index)}], "keywords", "type"}``. ``answer`` fills
``QAItem.answers``; each evidence pair contributes BOTH its turn ids (query and response), since
an answer often lives in the AI's reply; answerable/keywords/type (user-fact, ai-recommendation,
temporal, false-premise, unanswerable) and the key's file name go to ``QAItem.meta``. Every line is
validated (fields and types, user, qid range, question text after whitespace normalization, date,
turn range, duplicates); a key may cover only some questions (the others keep no answers).
Instead of ``question`` a key may carry ``question_sha1`` (``question_sha1(question)``: sha1 of the
cleaned, whitespace-normalized text); the shipped key does, so that it redistributes no GVD text.

Quirks handled (real files):
- user keys with stray spaces in ``memory_bank_en.json`` (``' Jason '``, ``' Linda'``,
  ``' Ivy '``, ``' Roland '``) are stripped to join with the questions;
- a date with no pairs (EN ``John Zhang`` 2023-05-05) stays an empty session, so every user has
  10 sessions;
- 23 EN questions are wrapped in literal double quotes (the string itself starts and ends with
  ``"``): the quotes are dropped, the raw text kept in ``QAItem.meta["raw_question"]``;
- EN/CN are not fully parallel (per-user pair counts differ, e.g. EN Roland 42 vs CN 38 pairs;
  EN Sunny q0 is a statement, not a question): each language is loaded as it is;
- ``summary``, ``personality`` and ``overall_history`` are always empty (MemoryBank fills them at
  run time) and are not loaded; dates are sorted even if the file is not.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable
from datetime import date
from pathlib import Path
from typing import Any

from recallbench import clock
from recallbench.datasets._common import check_known_count
from recallbench.errors import ConfigError, DatasetFormatError, did_you_mean
from recallbench.records import Episode, QAItem, Session, Turn

LANGUAGES = ("en", "cn")
KNOWN_USERS = 15  # users per language in the released eval_data
AI = "AI"
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


def load(
    data_dir: Path,
    language: str = "en",
    answer_key: str | Path | None = None,
    users: str | Iterable[str] | None = None,
) -> list[Episode]:
    """Load GVD episodes of one language from ``data_dir/gvd/eval_data/{language}``.

    Args:
        data_dir: data root holding ``gvd/``.
        language: "en" or "cn".
        answer_key: None, "default" (the shipped English key) or a path to a JSONL key.
        users: a user name or list of names to keep (after stripping); None keeps all.
    """
    if language not in LANGUAGES:
        raise ConfigError(did_you_mean("GVD language", str(language), LANGUAGES).args[0])
    data_dir = Path(data_dir)
    folder = data_dir / "gvd" / "eval_data" / language
    bank_path = folder / f"memory_bank_{language}.json"
    questions_path = folder / f"probing_questions_{language}.jsonl"
    bank = _read_bank(bank_path, _rel(bank_path, data_dir))
    questions = _read_questions(questions_path, _rel(questions_path, data_dir))
    for name in questions:
        if name not in bank:
            raise DatasetFormatError(
                f"{_rel(questions_path, data_dir)}: user {name!r} is not in {bank_path.name} "
                f"(users: {sorted(bank)})"
            )
    if users is None:  # a user filter is a legitimate subset
        check_known_count(len(bank), KNOWN_USERS, _rel(bank_path, data_dir), "users")
    episodes = {
        name: _episode(language, name, raw_key, record, questions.get(name, []))
        for name, (raw_key, record) in bank.items()
    }
    if answer_key is not None:
        episodes = _apply_key(episodes, _key_path(answer_key, language))
    if users is None:
        return list(episodes.values())
    wanted = [users] if isinstance(users, str) else [str(u) for u in users]
    for name in wanted:
        if name not in episodes:
            raise ConfigError(did_you_mean(f"GVD {language} user", name, episodes).args[0])
    return [e for name, e in episodes.items() if name in wanted]


def _rel(path: Path, data_dir: Path) -> str:
    try:
        return path.relative_to(data_dir).as_posix()
    except ValueError:
        return str(path)


def _read_json(path: Path, rel: str) -> Any:
    if not path.is_file():
        raise DatasetFormatError(f"{rel}: file not found")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DatasetFormatError(f"{rel} line {exc.lineno}: invalid JSON ({exc.msg})") from exc


def _read_bank(path: Path, rel: str) -> dict[str, tuple[str, dict]]:
    raw = _read_json(path, rel)
    if not isinstance(raw, dict):
        raise DatasetFormatError(f"{rel}: expected an object keyed by user name")
    bank: dict[str, tuple[str, dict]] = {}
    for key, record in raw.items():
        name = key.strip()
        if name in bank:
            raise DatasetFormatError(
                f"{rel}: users {bank[name][0]!r} and {key!r} clash after strip"
            )
        if not isinstance(record, dict) or not isinstance(record.get("history"), dict):
            raise DatasetFormatError(
                f"{rel} user {key!r}: expected an object with a 'history' object"
            )
        if not isinstance(record.get("meta_information", {}), dict):
            raise DatasetFormatError(f"{rel} user {key!r}: 'meta_information' must be an object")
        for day, pairs in record["history"].items():
            _check_day(rel, key, day, pairs)
        bank[name] = (key, record)
    return bank


def _check_day(rel: str, key: str, day: str, pairs: Any) -> None:
    try:
        date.fromisoformat(day)
    except (TypeError, ValueError) as exc:
        raise DatasetFormatError(
            f"{rel} user {key!r}: history key {day!r} is not YYYY-MM-DD"
        ) from exc
    if not isinstance(pairs, list):
        raise DatasetFormatError(f"{rel} user {key!r} date {day}: expected a list of pairs")
    for i, pair in enumerate(pairs):
        ok = isinstance(pair, dict) and all(
            isinstance(pair.get(k), str) for k in ("query", "response")
        )
        if not ok:
            found = sorted(pair) if isinstance(pair, dict) else type(pair).__name__
            raise DatasetFormatError(
                f"{rel} user {key!r} date {day} pair {i}: expected string 'query' and 'response' "
                f"(found {found})"
            )


def _read_questions(path: Path, rel: str) -> dict[str, list[str]]:
    if not path.is_file():
        raise DatasetFormatError(f"{rel}: file not found")
    out: dict[str, list[str]] = {}
    for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetFormatError(f"{rel} line {line_no}: invalid JSON ({exc.msg})") from exc
        ok = isinstance(obj, dict) and len(obj) == 1
        questions = next(iter(obj.values())) if ok else None
        if not (isinstance(questions, list) and all(isinstance(q, str) for q in questions)):
            raise DatasetFormatError(
                f'{rel} line {line_no}: expected one {{"<user>": [question, ...]}} object'
            )
        name = next(iter(obj)).strip()
        if name in out:
            raise DatasetFormatError(f"{rel} line {line_no}: user {name!r} listed twice")
        out[name] = questions
    return out


def _clean_question(text: str) -> str:
    text = " ".join(text.split())
    if len(text) >= 2 and text[0] == text[-1] == '"' and '"' not in text[1:-1]:
        text = text[1:-1].strip()
    return text


def _episode(lang: str, name: str, raw_key: str, record: dict, questions: list[str]) -> Episode:
    base = f"gvd-{lang}/{name}"
    days = sorted(record["history"])
    sessions = []
    for index, (day, start) in enumerate(zip(days, clock.from_dates(days), strict=True), start=1):
        sid = f"{base}/{day}"
        turns = []
        for i, pair in enumerate(record["history"][day]):
            turns.append(Turn(f"{sid}/p{i}/query", name, pair["query"].strip()))
            turns.append(Turn(f"{sid}/p{i}/response", AI, pair["response"].strip()))
        sessions.append(Session(sid, index, start, tuple(turns)))
    qa = []
    for j, raw in enumerate(questions):
        question = _clean_question(raw)
        meta = {"raw_question": raw} if question != raw else {}
        qa.append(QAItem(f"{base}/q{j}", question, (), len(sessions), meta=meta))
    meta = dict(record.get("meta_information") or {}) | {"language": lang, "user": name}
    if raw_key != name:
        meta["source_key"] = raw_key
    return Episode(base, "gvd", (name, AI), tuple(sessions), tuple(qa), meta)


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


def _same_question(entry: dict, question: str) -> bool:
    if "question" in entry:
        return _clean_question(entry["question"]) == question
    return entry["question_sha1"] == question_sha1(question)


def _is_str_list(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _key_entry(line: str, where: str) -> dict:
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


def _evidence_ids(entry: dict, episode: Episode, where: str) -> list[str]:
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


def _keyed_item(item: QAItem, entry: dict, episode: Episode, where: str, key_name: str) -> QAItem:
    evidence = tuple(_evidence_ids(entry, episode, where))
    meta = dict(item.meta) | {
        "answerable": entry["answerable"],
        "keywords": list(entry.get("keywords", [])),
        "type": entry.get("type", ""),
        "answer_key": key_name,
    }
    return dataclasses.replace(item, answers=entry["answers"], evidence=evidence, meta=meta)
