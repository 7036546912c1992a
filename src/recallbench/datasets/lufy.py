"""Load the LUFY dataset (Sumida et al. 2024) from its tree of annotated xlsx workbooks.

Format (``shared/data/lufy/SOURCE.md``; upstream GitHub ``ryuichi-sumida/LUFY``, ``Dataset/``):
``lufy/Dataset/{System}/{User}/Session{n}/Annotator{k}.xlsx``, System in LUFY, MemoryBank,
Naive RAG. Sheet ``Conversation``: header ``important? | speaker | utterance``, bot rows
``(None, 'Luke', text)``, user rows ``(0|1, user, text)`` (this annotator's importance label),
blank separator rows. Sheet ``Questions``: header ``Q_A | Questions``, then rows Q1, A1, Q2, A2,
Q3, A3. The annotator files of a session are copies of one conversation with different labels.

Records: one Episode per (system, user), id ``lufy/{system}/{user}``; one Session per
``Session{n}`` folder (4 in the real data) on consecutive simulated days (``clock.LUFY_GAP``);
turns ``.../s{n}/t{i}`` (``i`` = 0-based utterance position; the bot speaks first); each user turn
has ``labels["importance"] = {"0": 1, "1": 0, "2": 0}`` (annotator -> label); the session's QA
pairs are QAItems ``.../s{n}/q{1..3}`` with ``after_session = n``.

Canonical copy rule: turn and QA text come from the canonical annotator's file (option
``canonical_annotator``, default 0). Another annotator's labels are aligned to it by position
only when that copy has the same number of utterances with the same speaker sequence; otherwise
its labels are left out for that session. Every disagreement is listed in
``Episode.meta["mismatches"]`` with its kind: ``turn_count`` / ``speakers`` (labels dropped),
``turn_text`` (labels kept; the text differs after whitespace normalization), ``qa_text``
(canonical QA kept), ``missing_file`` (annotator seen in other sessions only).

Quirks handled (all seen in the real files):
- columns are read by position, never by header name: ``Naive RAG/James/Session3/Annotator1.xlsx``
  calls column A ``Unnamed: 0``; ``MemoryBank/William/Session3/Annotator2.xlsx`` has 18 extra
  ``Unnamed: 3..20`` columns (one cell holds a lone space) - columns after C are ignored;
- separator rows (no speaker) are skipped even when an annotator filled the label column down
  (label 0 on separator and bot rows in 27 files, e.g. ``Naive RAG/Mason/Session*/Annotator0``);
  labels on bot rows are ignored;
- a missing separator row (``LUFY/Ella/Session2/Annotator0.xlsx`` row 50, with a stray bot label);
- bot rows without text (7 turns, e.g. ``LUFY/Logan/Session3`` rows 59, 62 and 74, where the bot
  failed to answer) stay as turns with empty text, listed in ``meta["empty_turns"]``;
- leading/trailing spaces (2,225 utterance cells) are stripped; the only text difference between
  annotator copies (``LUFY/Isabella/Session4/Annotator2.xlsx``, turn 17) is such spaces;
- ``Questions`` sheets with extra ``Unnamed: 2..`` columns and free-text annotator comments after
  A3 or beside a QA row (9 files, e.g. ``MemoryBank/Noah/Session4/Annotator0.xlsx``; a pasted
  answer fragment in cell R7 of ``MemoryBank/James/Session4/Annotator1.xlsx``) -> kept in
  ``meta["annotator_comments"]`` as ``{session, annotator, cell, text}``, never in QA text;
- QA text that differs between copies (the bot called "Naomi" instead of "Luke" in
  ``MemoryBank/Mia/Session3``, ``MemoryBank/Mia/Session4`` and ``MemoryBank/William/Session3``).
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openpyxl
from openpyxl.utils import get_column_letter
from openpyxl.utils.exceptions import InvalidFileException

from recallbench import clock
from recallbench.datasets._common import check_known_count
from recallbench.errors import ConfigError, DatasetFormatError, did_you_mean
from recallbench.records import Episode, QAItem, Session, Turn

SYSTEMS = ("LUFY", "MemoryBank", "Naive RAG")
BOT = "Luke"
LAYOUT = "lufy/Dataset/{System}/{User}/Session{n}/Annotator{k}.xlsx"

_SESSION = re.compile(r"Session(\d+)")
_ANNOTATOR = re.compile(r"Annotator(\d+)\.xlsx")
_QA_KEYS = ("Q1", "A1", "Q2", "A2", "Q3", "A3")
_LABEL_HEADERS = ("important?", "unnamed: 0", "")
_CONV_HEADER = "('important?' or 'Unnamed: 0', 'speaker', 'utterance')"


@dataclass(frozen=True)
class _Utterance:
    row: int
    speaker: str
    text: str
    label: int | None


@dataclass(frozen=True)
class _Copy:
    """One annotator's workbook of one session."""

    utterances: tuple[_Utterance, ...]
    qa: tuple[tuple[str, str], ...]
    comments: tuple[dict[str, str], ...]


def load(
    data_dir: Path,
    system: str | Iterable[str] | None = None,
    users: str | Iterable[str] | None = None,
    canonical_annotator: int | str = 0,
) -> list[Episode]:
    """Load LUFY episodes from ``data_dir/lufy/Dataset``.

    Args:
        data_dir: data root holding ``lufy/``.
        system: one of ``SYSTEMS`` or a list of them; None loads all three (51 episodes).
        users: a user name or list of names to keep; None keeps every user.
        canonical_annotator: annotator whose copy gives the text (see module docstring).
    """
    data_dir = Path(data_dir)
    root = data_dir / "lufy" / "Dataset"
    if not root.is_dir():
        raise DatasetFormatError(f"{root}: folder not found (expected {LAYOUT})")
    canon = str(canonical_annotator)
    episodes = []
    for name in _select(system, SYSTEMS, "LUFY system"):
        system_dir = root / name
        if not system_dir.is_dir():
            raise DatasetFormatError(f"{_rel(system_dir, data_dir)}: folder missing ({LAYOUT})")
        found = sorted(p.name for p in system_dir.iterdir() if _visible_dir(p))
        if users is None:
            check_known_count(len(found), KNOWN_USERS, _rel(system_dir, data_dir), "users")
        for user in _select(users, found, f"user of LUFY system {name!r}"):
            episodes.append(_load_episode(data_dir, system_dir / user, name, user, canon))
    return episodes


KNOWN_USERS = 17  # per system in the released Dataset/ (51 episodes over the three systems)


def _select(value: str | Iterable[str] | None, options: Iterable[str], kind: str) -> list[str]:
    options = list(options)
    if value is None:
        return options
    wanted = [value] if isinstance(value, str) else [str(v) for v in value]
    for name in wanted:
        if name not in options:
            raise ConfigError(did_you_mean(kind, name, options).args[0])
    return [o for o in options if o in wanted]


def _visible_dir(path: Path) -> bool:
    return path.is_dir() and not path.name.startswith(".")


def _rel(path: Path, data_dir: Path) -> str:
    try:
        return path.relative_to(data_dir).as_posix()
    except ValueError:
        return str(path)


def _load_episode(data_dir: Path, user_dir: Path, system: str, user: str, canon: str) -> Episode:
    folders = _session_folders(data_dir, user_dir)
    base = f"lufy/{system}/{user}"
    copies = {n: _read_copies(data_dir, folder, user) for n, folder in folders}
    annotators = sorted({a for c in copies.values() for a in c}, key=int)
    meta: dict[str, Any] = {
        "system": system,
        "user": user,
        "annotators": annotators,
        "canonical_annotator": canon,
        "mismatches": [],
        "annotator_comments": [],
        "empty_turns": [],
    }
    sessions, qa = [], []
    starts = clock.regular(len(folders), clock.LUFY_GAP)
    for (n, folder), start in zip(folders, starts, strict=True):
        by_annotator = copies[n]
        if canon not in by_annotator:
            raise DatasetFormatError(
                f"{_rel(folder, data_dir)}: canonical Annotator{canon}.xlsx missing "
                f"(found: {sorted(f'Annotator{a}.xlsx' for a in by_annotator)})"
            )
        for missing in sorted(set(annotators) - set(by_annotator), key=int):
            meta["mismatches"].append({"session": n, "annotator": missing, "kind": "missing_file"})
        session = _build_session(f"{base}/s{n}", n, start, by_annotator, canon, meta)
        sessions.append(session)
        qa.extend(_qa_items(f"{base}/s{n}", n, by_annotator, canon, meta))
        for annotator, copy in by_annotator.items():
            for comment in copy.comments:
                entry = {"session": n, "annotator": annotator}
                meta["annotator_comments"].append(entry | comment)
    return Episode(base, "lufy", (BOT, user), tuple(sessions), tuple(qa), meta)


def _session_folders(data_dir: Path, user_dir: Path) -> list[tuple[int, Path]]:
    folders = sorted(
        (int(m.group(1)), p)
        for p in user_dir.iterdir()
        if _visible_dir(p) and (m := _SESSION.fullmatch(p.name))
    )
    numbers = [n for n, _ in folders]
    if not numbers or numbers != list(range(1, len(numbers) + 1)):
        raise DatasetFormatError(
            f"{_rel(user_dir, data_dir)}: expected folders Session1..SessionN without gaps, "
            f"found {[f'Session{n}' for n in numbers]}"
        )
    return folders


def _read_copies(data_dir: Path, folder: Path, user: str) -> dict[str, _Copy]:
    files = sorted(
        (int(m.group(1)), p) for p in folder.iterdir() if (m := _ANNOTATOR.fullmatch(p.name))
    )
    if not files:
        raise DatasetFormatError(f"{_rel(folder, data_dir)}: no Annotator{{k}}.xlsx files")
    return {str(k): _read_copy(path, _rel(path, data_dir), user) for k, path in files}


def _read_copy(path: Path, rel: str, user: str) -> _Copy:
    try:
        wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except (zipfile.BadZipFile, InvalidFileException, KeyError, OSError) as exc:
        raise DatasetFormatError(f"{rel}: not a readable xlsx workbook ({exc})") from exc
    try:
        for sheet in ("Conversation", "Questions"):
            if sheet not in wb.sheetnames:
                raise DatasetFormatError(
                    f"{rel}: sheet {sheet!r} missing (sheets: {wb.sheetnames})"
                )
        utterances = _read_conversation(wb["Conversation"], rel, user)
        qa, comments = _read_questions(wb["Questions"], rel)
    finally:
        wb.close()
    return _Copy(utterances, qa, comments)


def _text(value: object) -> str:
    return "" if value is None else str(value).strip()


def _pad(row: tuple, width: int) -> tuple:
    return tuple(row) + (None,) * (width - len(row))


def _read_conversation(ws: Any, rel: str, user: str) -> tuple[_Utterance, ...]:
    where = f"{rel} sheet 'Conversation'"
    rows = ws.iter_rows(max_col=3, values_only=True)
    header = [_text(c) for c in _pad(next(rows, ()), 3)[:3]]
    if (
        header[0].lower() not in _LABEL_HEADERS
        or header[1].lower() != "speaker"
        or header[2].lower() != "utterance"
    ):
        raise DatasetFormatError(f"{where} row 1: expected header {_CONV_HEADER}, got {header}")
    out = []
    for row_no, row in enumerate(rows, start=2):
        label, speaker, text = _pad(row, 3)[:3]
        speaker, text = _text(speaker), _text(text)
        if not speaker:  # separator row; a filled-down label there means nothing
            if text:
                raise DatasetFormatError(f"{where} row {row_no}: utterance without speaker")
            continue
        if speaker == BOT:
            out.append(_Utterance(row_no, BOT, text, None))
        elif speaker == user:
            out.append(_Utterance(row_no, user, text, _label(label, f"{where} row {row_no}")))
        else:
            raise DatasetFormatError(
                f"{where} row {row_no}: speaker {speaker!r}, expected {BOT!r} or {user!r}"
            )
    if not out:
        raise DatasetFormatError(f"{where}: no utterances after the header")
    return tuple(out)


def _label(value: object, where: str) -> int:
    if isinstance(value, (int, float)) and value in (0, 1):
        return int(value)
    if isinstance(value, str) and value.strip() in ("0", "1"):
        return int(value.strip())
    raise DatasetFormatError(f"{where}: importance label (column A) must be 0 or 1, got {value!r}")


def _read_questions(
    ws: Any, rel: str
) -> tuple[tuple[tuple[str, str], ...], tuple[dict[str, str], ...]]:
    where = f"{rel} sheet 'Questions'"
    rows = list(ws.iter_rows(values_only=True))
    header = [_text(c) for c in _pad(rows[0] if rows else (), 2)[:2]]
    if [h.lower() for h in header] != ["q_a", "questions"]:
        raise DatasetFormatError(
            f"{where} row 1: expected header ('Q_A', 'Questions'), got {header}"
        )
    if len(rows) < 1 + len(_QA_KEYS):
        raise DatasetFormatError(
            f"{where}: expected rows {', '.join(_QA_KEYS)} after the header, "
            f"found {len(rows) - 1} rows"
        )
    cells: dict[str, str] = {}
    comments: list[dict[str, str]] = []
    for row_no, (key, row) in enumerate(zip(_QA_KEYS, rows[1:], strict=False), start=2):
        found, value = (_text(c) for c in _pad(row, 2)[:2])
        if found.upper() != key:
            raise DatasetFormatError(
                f"{where} row {row_no}: expected {key!r} in column A, got {found!r} "
                f"(QA rows must be {', '.join(_QA_KEYS)})"
            )
        if not value:
            raise DatasetFormatError(f"{where} row {row_no}: {key} text (column B) is empty")
        cells[key] = value
        comments.extend(_comments(row, row_no, first_col=3))
    for row_no, row in enumerate(rows[1 + len(_QA_KEYS) :], start=2 + len(_QA_KEYS)):
        comments.extend(_comments(row, row_no, first_col=1))  # free text after A3
    qa = tuple((cells[f"Q{i}"], cells[f"A{i}"]) for i in (1, 2, 3))
    return qa, tuple(comments)


def _comments(row: tuple, row_no: int, first_col: int) -> list[dict[str, str]]:
    return [
        {"cell": f"{get_column_letter(col)}{row_no}", "text": _text(value)}
        for col, value in enumerate(row[first_col - 1 :], start=first_col)
        if _text(value)
    ]


def _norm(text: str) -> str:
    return " ".join(text.split())


def _alignment(canon: tuple[_Utterance, ...], other: tuple[_Utterance, ...]) -> dict | None:
    """Return why ``other`` cannot be aligned to ``canon`` by position, or None if it can."""
    if len(other) != len(canon):
        return {"kind": "turn_count", "expected": len(canon), "found": len(other)}
    for i, (a, b) in enumerate(zip(canon, other, strict=True)):
        if a.speaker != b.speaker:
            return {"kind": "speakers", "turn": i, "expected": a.speaker, "found": b.speaker}
    return None


def _build_session(
    sid: str, n: int, start: Any, copies: dict[str, _Copy], canon: str, meta: dict
) -> Session:
    canonical = copies[canon].utterances
    aligned = []
    for annotator in sorted(copies, key=int):
        other = copies[annotator].utterances
        problem = None if annotator == canon else _alignment(canonical, other)
        if problem:
            meta["mismatches"].append({"session": n, "annotator": annotator} | problem)
            continue
        aligned.append(annotator)
        differs = [
            f"{sid}/t{i}"
            for i, (a, b) in enumerate(zip(canonical, other, strict=True))
            if _norm(a.text) != _norm(b.text)
        ]
        if differs:
            entry = {"session": n, "annotator": annotator, "kind": "turn_text", "turns": differs}
            meta["mismatches"].append(entry)
    turns = []
    for i, utt in enumerate(canonical):
        labels = {}
        if utt.speaker != BOT:
            labels["importance"] = {a: copies[a].utterances[i].label for a in aligned}
        turns.append(Turn(f"{sid}/t{i}", utt.speaker, utt.text, labels))
        if not utt.text:
            meta["empty_turns"].append(f"{sid}/t{i}")
    return Session(sid, n, start, tuple(turns))


def _qa_items(sid: str, n: int, copies: dict[str, _Copy], canon: str, meta: dict) -> list[QAItem]:
    canonical = copies[canon].qa
    for annotator in sorted(copies, key=int):
        items = [
            f"{kind}{i}"
            for i, (a, b) in enumerate(zip(canonical, copies[annotator].qa, strict=True), start=1)
            for kind, x, y in (("Q", a[0], b[0]), ("A", a[1], b[1]))
            if _norm(x) != _norm(y)
        ]
        if items:
            entry = {"session": n, "annotator": annotator, "kind": "qa_text", "items": items}
            meta["mismatches"].append(entry)
    return [
        QAItem(f"{sid}/q{i}", question, (answer,), after_session=n)
        for i, (question, answer) in enumerate(canonical, start=1)
    ]
