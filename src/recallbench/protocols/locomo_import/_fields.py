"""Field checks of the answer-file readers: each error one line naming file, item, expectation."""

from __future__ import annotations

import json
from pathlib import Path

from recallbench.errors import DatasetFormatError
from recallbench.records import JSON


def fail(where: str, message: str) -> DatasetFormatError:
    """The error of one item: ``<where>: <message>``."""
    return DatasetFormatError(f"{where}: {message}")


def field(
    rec: object, key: str, types: type[object] | tuple[type[object], ...], where: str
) -> JSON:
    """``rec[key]`` checked to be of ``types`` (a bool is not a number here)."""
    if not isinstance(rec, dict):
        raise fail(where, f"expected an object, got {type(rec).__name__}")
    if key not in rec:
        raise fail(where, f"{key!r} missing (keys: {sorted(rec)[:8]})")
    value = rec[key]
    if not isinstance(value, types) or isinstance(value, bool) and bool not in _tuple(types):
        raise fail(where, f"{key!r} should be {_names(types)}, got {value!r}"[:240])
    return value


def _tuple(types: type[object] | tuple[type[object], ...]) -> tuple[type[object], ...]:
    return types if isinstance(types, tuple) else (types,)


def _names(types: type[object] | tuple[type[object], ...]) -> str:
    return " or ".join(t.__name__ for t in _tuple(types))


def category_of(value: object, where: str) -> int:
    """A category 1-4 (a number or its string); anything else is an unknown category."""
    text = str(value).strip()
    if isinstance(value, bool) or text not in {"1", "2", "3", "4"}:
        raise fail(where, f"unknown category {value!r} (expected 1-4, the release's numbers)")
    return int(text)


def load_json(path: Path, name: str) -> JSON:
    """Parse a whole JSON file; a syntax error (a truncated file) names file, line, column."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise fail(
            f"{name} line {exc.lineno} column {exc.colno}",
            f"invalid JSON ({exc.msg}): truncated or not a JSON answer file",
        ) from None
