"""Helpers shared by the dataset loaders: file reading with located errors, field checks, ids.

Every error names the file (relative to the data root when it lies inside it), the line or record
and what was expected, so that a broken download is fixed in one look.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TypeVar, overload

from recallbench.errors import DataNotFoundError, DatasetFormatError, DatasetSubsetWarning
from recallbench.records import Turn
from recallbench.store import JSONValue

T = TypeVar("T")
U = TypeVar("U")
V = TypeVar("V")


def display(path: Path, root: Path) -> str:
    """Return ``path`` relative to the data root when it lies inside it (for error messages)."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def require_file(path: Path, root: Path, what: str) -> Path:
    """Return ``path`` if it is a file, else raise ``DataNotFoundError`` listing its folder."""
    if path.is_file():
        return path
    folder = path.parent
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    present = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
    shown = ", ".join(present[:8]) + (f" ... ({len(present)} entries)" if len(present) > 8 else "")
    raise DataNotFoundError(
        f"{what}: {display(path, root)} not found under {root} "
        f"({display(folder, root)}/ holds: {shown or 'nothing'}). Fetch the data with `make data`,"
        " or point RECALLBENCH_DATA_DIR (make: DATA_DIR=) at an existing copy."
    )


def read_json(path: Path, root: Path) -> JSONValue:
    """Parse a whole JSON file; a syntax error names the file, line and column."""
    with path.open(encoding="utf-8") as fh:
        try:
            value: JSONValue = json.load(fh)
            return value
        except json.JSONDecodeError as exc:
            raise DatasetFormatError(
                f"{display(path, root)} line {exc.lineno} column {exc.colno}: invalid JSON ({exc.msg})"
            ) from None


def iter_jsonl(path: Path, root: Path) -> Iterator[tuple[str, dict[str, JSONValue]]]:
    """Yield ``(where, record)`` for each non-blank line; ``where`` is ``"<file> line <n>"``."""
    name = display(path, root)
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            where = f"{name} line {number}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetFormatError(f"{where}: invalid JSON ({exc.msg})") from None
            yield where, json_object(record, where)


def json_object(value: JSONValue, where: str) -> dict[str, JSONValue]:
    """``value`` when it is a JSON object; else an error naming ``where``."""
    if not isinstance(value, dict):
        raise DatasetFormatError(f"{where}: expected a JSON object, got {type(value).__name__}")
    return value


_TYPE_NAMES = {str: "a string", list: "a list", dict: "an object", int: "an integer"}


@overload
def get(record: object, key: str, kind: type[T], where: str) -> T: ...


@overload
def get(record: object, key: str, kind: tuple[type[T], type[U]], where: str) -> T | U: ...


@overload
def get(
    record: object, key: str, kind: tuple[type[T], type[U], type[V]], where: str
) -> T | U | V: ...


def get(
    record: object, key: str, kind: type[object] | tuple[type[object], ...], where: str
) -> object:
    """Return ``record[key]`` checked against ``kind``; missing or mistyped raises located."""
    if not isinstance(record, dict):
        raise DatasetFormatError(f"{where}: expected an object, got {type(record).__name__}")
    if key not in record:
        raise DatasetFormatError(f"{where}: {key!r} missing (keys: {sorted(record)})")
    value = record[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        expected = " or ".join(_TYPE_NAMES.get(k, k.__name__) for k in kinds)
        got = "null" if value is None else f"{type(value).__name__} {_short(value)}"
        raise DatasetFormatError(f"{where}: {key!r} should be {expected}, got {got}")
    return value


def strings(values: object, what: str, where: str) -> list[str]:
    """Check that ``values`` is a list of strings and return it as a new list."""
    if not isinstance(values, list):
        raise DatasetFormatError(f"{where}: {what} should be a list, got {type(values).__name__}")
    for i, value in enumerate(values):
        if not isinstance(value, str):
            raise DatasetFormatError(
                f"{where}: {what}[{i}] should be a string, got {type(value).__name__} "
                f"{_short(value)}"
            )
    return list(values)


def _short(value: object, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def session_id(episode_id: str, index: int) -> str:
    """Return the id of session ``index`` (1-based) of an episode."""
    return f"{episode_id}/s{index}"


def make_turns(
    sid: str,
    utterances: Sequence[tuple[str, str]],
    labels: Sequence[Mapping[str, object]] | None = None,
) -> tuple[Turn, ...]:
    """Build the turns of session ``sid`` from ``(speaker, text)`` pairs; ids ``<sid>/t<j>``."""
    labels = labels or [{} for _ in utterances]
    return tuple(
        Turn(f"{sid}/t{j}", speaker, text, dict(lab))
        for j, ((speaker, text), lab) in enumerate(zip(utterances, labels, strict=True))
    )


def speakers_in_order(sessions: Sequence[Sequence[tuple[str, str]]]) -> tuple[str, ...]:
    """Return the distinct speakers of ``(speaker, text)`` sessions in order of first appearance."""
    return tuple(dict.fromkeys(spk for utterances in sessions for spk, _ in utterances))


def require_records(n: int, where: str, what: str) -> None:
    """Raise when a file that must hold records holds none (an empty or truncated download)."""
    if n == 0:
        raise DatasetFormatError(
            f"{where}: no {what} (the file is empty); re-fetch it with `make data` or restore "
            "the copy it came from"
        )


def check_known_count(n: int, known: int | None, where: str, what: str) -> None:
    """Warn loudly when ``n`` differs from the public release's count ``known`` (None: unknown).

    A subset is legitimate (fixtures, a user's sample), so this warns instead of failing; the
    warning names the file and both counts so that a truncated download is seen at once.
    """
    if known is not None and n != known:
        warnings.warn(
            f"{where}: {n} {what}, the public release has {known} (a subset, or a truncated copy?)",
            DatasetSubsetWarning,
            stacklevel=3,
        )
