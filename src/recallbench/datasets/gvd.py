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

import json
from collections.abc import Iterable
from datetime import date
from pathlib import Path
from typing import Any

from recallbench import clock
from recallbench.datasets._common import check_known_count
from recallbench.datasets._gvd_key import (
    DEFAULT_KEYS,
    _apply_key,
    _clean_question,
    _key_path,
    question_sha1,
)
from recallbench.errors import ConfigError, DatasetFormatError, did_you_mean
from recallbench.records import Episode, QAItem, Session, Turn

__all__ = ["AI", "DEFAULT_KEYS", "KNOWN_USERS", "LANGUAGES", "load", "question_sha1"]

LANGUAGES = ("en", "cn")
KNOWN_USERS = 15  # users per language in the released eval_data
AI = "AI"


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


def _read_bank(path: Path, rel: str) -> dict[str, tuple[str, dict[str, Any]]]:
    raw = _read_json(path, rel)
    if not isinstance(raw, dict):
        raise DatasetFormatError(f"{rel}: expected an object keyed by user name")
    bank: dict[str, tuple[str, dict[str, Any]]] = {}
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


def _episode(
    lang: str, name: str, raw_key: str, record: dict[str, Any], questions: list[str]
) -> Episode:
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
