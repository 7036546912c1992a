"""Load LongMemEval (Wu et al., ICLR 2025, arXiv 2410.10813), the cleaned release.

Format (``shared/data/longmemeval/SOURCE.md``; upstream ``xiaowu0162/LongMemEval``, data on the HF
hub ``xiaowu0162/longmemeval-cleaned``, MIT): one JSON list of instances per variant, under the
official names ``longmemeval/longmemeval_oracle.json``, ``longmemeval_s_cleaned.json`` and
``longmemeval_m_cleaned.json``, each also read as ``.json.xz`` or ``.json.gz`` (the first that
exists, in that order). An instance: ``question_id`` (``_abs`` marks the 30 abstention
questions), ``question_type`` (``QUESTION_TYPES``), ``question``, ``answer`` (a string or a
number), ``question_date`` and ``haystack_dates`` ("2023/05/30 (Tue) 04:48"),
``haystack_session_ids``, ``haystack_sessions`` (lists of ``{"role", "content"[, "has_answer"]}``)
and ``answer_session_ids``.

Records: one Episode per question, id ``longmemeval/<question_id>``, speakers ``("user",
"assistant")``. Its haystack sessions in time order (parsed dates; ties keep the file's order),
session ``i`` (1-based in that order) is ``<episode>/<haystack session id>`` starting at its date;
turn ``n`` (1-based over all turns of the session, as ``run_retrieval.py`` numbers them) is
``<episode>/<session id>_<n>`` with labels ``role``, ``lme_id`` (``<session id>_<n>``, the
authors' turn id), ``lme_session`` (the session id) and ``has_answer`` (when the file has it).
One QAItem ``<episode>/question``: answers ``(str(answer),)``, asked after the last session,
evidence = the ``has_answer`` turns, ``kind`` = the question type, ``meta``: ``question_id``,
``question_type``, ``abstention``, ``answer_session_ids``, ``question_date`` (ISO). The episode's
``meta``: ``question_id``, ``question_date`` (ISO: when the question is asked), ``variant``,
``source`` and ``missing`` (the questions of the variant's full release this copy lacks: the
oracle file's ids absent here when both files are present; ``MISSING_KEY``).

Bad files (a truncated or invalid file, a missing or mistyped field, an unknown question type, a
date that does not parse, sessions and dates of different lengths) raise one line naming the
file, the question and the field.
"""

from __future__ import annotations

import gzip
import json
import lzma
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from recallbench.datasets._common import check_known_count, display, get, require_file, strings
from recallbench.errors import ConfigError, DatasetFormatError, did_you_mean
from recallbench.records import Episode, QAItem, Session, Turn

__all__ = [
    "FILES",
    "KNOWN_QUESTIONS",
    "MISSING_KEY",
    "QUESTION_TYPES",
    "find_file",
    "load",
    "missing_questions",
    "parse_date",
]

FOLDER = "longmemeval"
FILES = {
    "oracle": "longmemeval_oracle",
    "s": "longmemeval_s_cleaned",
    "m": "longmemeval_m_cleaned",
}
SUFFIXES = (".json", ".json.xz", ".json.gz")
KNOWN_QUESTIONS = 500
QUESTION_TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "temporal-reasoning",
    "knowledge-update",
)
DATE_FORMAT = "%Y/%m/%d (%a) %H:%M"
MISSING_KEY = "missing"
SPEAKERS = ("user", "assistant")


def parse_date(text: str, where: str) -> datetime:
    """Parse a LongMemEval date ("2023/05/30 (Tue) 04:48"); an error names ``where``."""
    try:
        return datetime.strptime(text.strip(), DATE_FORMAT)
    except ValueError:
        raise DatasetFormatError(
            f"{where}: {text!r} is not a date like '2023/05/30 (Tue) 04:48'"
        ) from None


def find_file(data_dir: Path, variant: str) -> Path:
    """The variant's file under ``data_dir/longmemeval`` (.json, .json.xz or .json.gz)."""
    if variant not in FILES:
        raise did_you_mean("LongMemEval variant", str(variant), FILES)
    base = Path(data_dir) / FOLDER / FILES[variant]
    for suffix in SUFFIXES:
        path = base.with_name(base.name + suffix)
        if path.is_file():
            return path
    return require_file(base.with_name(base.name + ".json"), Path(data_dir), "LongMemEval")


def _read(path: Path, root: Path) -> list[Any]:
    name = display(path, root)
    opener: Any = {".xz": lzma.open, ".gz": gzip.open}.get(path.suffix, open)
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            data = json.load(fh)
    except json.JSONDecodeError as exc:
        raise DatasetFormatError(
            f"{name} line {exc.lineno} column {exc.colno}: invalid JSON ({exc.msg}); "
            "a truncated download? re-fetch it"
        ) from None
    except (EOFError, lzma.LZMAError, gzip.BadGzipFile, UnicodeDecodeError) as exc:
        raise DatasetFormatError(
            f"{name}: cannot be read ({type(exc).__name__}: {exc}); a truncated or corrupt "
            "download? re-fetch it"
        ) from None
    if not isinstance(data, list):
        raise DatasetFormatError(f"{name}: expected a JSON list of questions, got a {type(data)}")
    return data


def load(
    data_dir: Path,
    variant: str = "oracle",
    questions: str | Iterable[str] | None = None,
    types: str | Iterable[str] | None = None,
    limit: int | None = None,
) -> list[Episode]:
    """Load the LongMemEval questions of ``variant`` (oracle | s | m) as episodes.

    Args:
        data_dir: data root holding ``longmemeval/``.
        variant: oracle (evidence sessions only), s (~115k-token haystacks) or m (~500 sessions).
        questions: a question id or list of them to keep (in that order); None keeps all.
        types: a question type or list of them to keep; None keeps all.
        limit: keep the first ``limit`` questions (after the filters) in the file's order.
    """
    root = Path(data_dir)
    path = find_file(root, variant)
    name = display(path, root)
    raw = _read(path, root)
    ids = [_question_id(rec, f"{name} record {k}") for k, rec in enumerate(raw)]
    missing = missing_questions(root, variant, ids)
    keep = _selected(ids, raw, questions, types, name)
    if limit is not None:
        keep = keep[: int(limit)]
    if questions is None and types is None and limit is None and not missing:
        check_known_count(len(raw), KNOWN_QUESTIONS, name, "questions")
    return [_episode(raw[k], f"{name} question {ids[k]}", variant, name, missing) for k in keep]


def missing_questions(root: Path, variant: str, ids: Sequence[str]) -> list[str]:
    """The oracle's question ids that the ``variant`` file lacks (oracle: none; none when the
    oracle file is absent, so nothing can be compared)."""
    if variant == "oracle":
        return []
    try:
        oracle = find_file(root, "oracle")
    except FileNotFoundError:
        return []
    name = display(oracle, root)
    have = set(ids)
    ref = [_question_id(rec, f"{name} record {k}") for k, rec in enumerate(_read(oracle, root))]
    return sorted(q for q in ref if q not in have)


def _question_id(rec: Any, where: str) -> str:
    return str(get(rec, "question_id", str, where))


def _selected(
    ids: list[str],
    raw: list[Any],
    questions: str | Iterable[str] | None,
    types: str | Iterable[str] | None,
    name: str,
) -> list[int]:
    keep = list(range(len(ids)))
    if questions is not None:
        wanted = [questions] if isinstance(questions, str) else [str(q) for q in questions]
        index = {q: k for k, q in enumerate(ids)}
        for q in wanted:
            if q not in index:
                raise ConfigError(did_you_mean(f"LongMemEval question ({name})", q, index).args[0])
        keep = [index[q] for q in wanted]
    if types is not None:
        allowed = [types] if isinstance(types, str) else [str(t) for t in types]
        for t in allowed:
            if t not in QUESTION_TYPES:
                raise did_you_mean("LongMemEval question type", t, QUESTION_TYPES)
        keep = [k for k in keep if raw[k].get("question_type") in allowed]
    return keep


def _episode(rec: Any, where: str, variant: str, name: str, missing: list[str]) -> Episode:
    qid = _question_id(rec, where)
    eid = f"longmemeval/{qid}"
    qtype = str(get(rec, "question_type", str, where))
    if qtype not in QUESTION_TYPES:
        raise DatasetFormatError(
            f"{where}: 'question_type' {qtype!r} is not one of {', '.join(QUESTION_TYPES)}"
        )
    asked = parse_date(str(get(rec, "question_date", str, where)), f"{where} 'question_date'")
    sids = strings(get(rec, "haystack_session_ids", list, where), "haystack_session_ids", where)
    dates = strings(get(rec, "haystack_dates", list, where), "haystack_dates", where)
    raw_sessions = get(rec, "haystack_sessions", list, where)
    if not len(sids) == len(dates) == len(raw_sessions):
        raise DatasetFormatError(
            f"{where}: 'haystack_session_ids' ({len(sids)}), 'haystack_dates' ({len(dates)}) and "
            f"'haystack_sessions' ({len(raw_sessions)}) should have one entry per session"
        )
    if not sids:
        raise DatasetFormatError(f"{where}: 'haystack_sessions' is empty")
    starts = [parse_date(d, f"{where} 'haystack_dates'[{j}]") for j, d in enumerate(dates)]
    order = sorted(range(len(sids)), key=lambda j: (starts[j], j))
    sessions = [
        _session(eid, i + 1, sids[j], starts[j], raw_sessions[j], f"{where} session {sids[j]}")
        for i, j in enumerate(order)
    ]
    answer_sessions = strings(
        get(rec, "answer_session_ids", list, where), "answer_session_ids", where
    )
    answer = get(rec, "answer", (str, int, float), where)
    qa = QAItem(
        f"{eid}/question",
        str(get(rec, "question", str, where)).strip(),
        (str(answer).strip(),),
        len(sessions),
        tuple(t.turn_id for s in sessions for t in s.turns if t.labels.get("has_answer") is True),
        qtype,
        {
            "question_id": qid,
            "question_type": qtype,
            "abstention": "_abs" in qid,
            "answer_session_ids": answer_sessions,
            "question_date": asked.isoformat(),
        },
    )
    meta = {
        "question_id": qid,
        "question_date": asked.isoformat(),
        "variant": variant,
        "source": name,
        MISSING_KEY: list(missing),
    }
    return Episode(eid, "longmemeval", SPEAKERS, tuple(sessions), (qa,), meta)


def _session(eid: str, index: int, sid: str, start: datetime, raw: Any, where: str) -> Session:
    if not isinstance(raw, list):
        raise DatasetFormatError(f"{where}: expected a list of turns, got {type(raw).__name__}")
    turns = []
    for n, rec in enumerate(raw, start=1):
        at = f"{where} turn {n}"
        role = str(get(rec, "role", str, at))
        if role not in SPEAKERS:
            raise DatasetFormatError(f"{at}: 'role' should be 'user' or 'assistant', got {role!r}")
        labels: dict[str, Any] = {"role": role, "lme_id": f"{sid}_{n}", "lme_session": sid}
        if "has_answer" in rec:
            labels["has_answer"] = get(rec, "has_answer", bool, at)
        text = str(get(rec, "content", str, at))
        turns.append(Turn(f"{eid}/{sid}_{n}", role, text, labels))
    return Session(f"{eid}/{sid}", index, start, tuple(turns))
