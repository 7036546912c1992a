"""Reading one LUFY annotator workbook (``datasets.lufy``): the conversation sheet with its
importance labels, the probing questions and the annotators' comments, with located errors.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openpyxl
from openpyxl.utils import get_column_letter
from openpyxl.utils.exceptions import InvalidFileException

from recallbench.errors import DatasetFormatError

BOT = "Luke"
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


def _rel(path: Path, data_dir: Path) -> str:
    try:
        return path.relative_to(data_dir).as_posix()
    except ValueError:
        return str(path)


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


def _pad(row: tuple[object, ...], width: int) -> tuple[object, ...]:
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


def _comments(row: tuple[object, ...], row_no: int, first_col: int) -> list[dict[str, str]]:
    return [
        {"cell": f"{get_column_letter(col)}{row_no}", "text": _text(value)}
        for col, value in enumerate(row[first_col - 1 :], start=first_col)
        if _text(value)
    ]
