"""How a cache's values are kept: a ``Table`` per kind of value, a ``Layout`` per cache file.

The one cache layer (``store.values``) reads and writes every cache through these: a ``Table``
says which namespace it holds and how a value maps to the columns of its SQLite table (as the
runs before the layer wrote them) and to JSON on a server store; a ``Layout`` is a cache file's
schema and tables.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, Protocol, TypeVar

from recallbench.store.base import JSONValue

__all__ = [
    "Layout",
    "Row",
    "StoredTable",
    "Table",
    "dumps",
    "json_column",
    "json_value",
    "read_value",
]

Row = Sequence[object]  # a row's columns (as sqlite3 gives them, or to write): checked on read
V = TypeVar("V")
T = TypeVar("T")


def dumps(value: object) -> str:
    """A value as the caches write JSON text (canonical: sorted keys, NaN refused)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, sort_keys=True)


def json_column(row: Row, index: int = 0) -> JSONValue:
    """The JSON text of a row's column ``index`` (a column that is not text is an error)."""
    text = row[index]
    if not isinstance(text, str):
        raise ValueError(f"expected JSON text, got {type(text).__name__}")
    loaded: JSONValue = json.loads(text)
    return loaded


def json_value(value: JSONValue) -> JSONValue:
    """A JSON value as it is (``Table.to_json``/``from_json`` of a value kept as JSON)."""
    return value


@dataclass(frozen=True)
class Table(Generic[V]):
    """How one kind of value is kept: in a table of a cache file and as JSON on a server.

    ``namespace``: the namespace the table holds, or a prefix ending in ``:`` (``emb:``) whose
    rest is the table's ``model`` column (``emb:minilm`` -> ``model = 'minilm'``). A row is
    ``[model,] key`` and then ``to_row(value)`` (every further column, in the table's order);
    ``from_row`` makes the value of the ``columns`` read back. ``to_json``/``from_json``: the
    value on a server. A reader raises ``ValueError`` for what it cannot read (the layer adds
    where). ``insert``: what a second write of a key does; ``key``: the key's column.
    """

    name: str
    namespace: str
    columns: tuple[str, ...]
    to_row: Callable[[V], Row]
    from_row: Callable[[Row], V]
    to_json: Callable[[V], JSONValue]
    from_json: Callable[[JSONValue], V]
    insert: Literal["REPLACE", "IGNORE"] = "REPLACE"
    key: str = "key"

    @property
    def prefixed(self) -> bool:
        """Whether the namespace is a prefix over the ``model`` column."""
        return self.namespace.endswith(":")

    def holds(self, namespace: str) -> bool:
        """Whether ``namespace`` lives in this table."""
        if self.prefixed:
            return namespace.startswith(self.namespace) and namespace != self.namespace
        return namespace == self.namespace

    def row_json(self, row: Row) -> JSONValue:
        """The JSON (a server's form) of a stored row's ``columns``."""
        return self.to_json(self.from_row(row))

    def json_row(self, value: JSONValue) -> Row:
        """The columns to store of a value given as JSON (a server's form)."""
        return self.to_row(self.from_json(value))


class StoredTable(Protocol):
    """A ``Table`` of any value type, as a ``Layout`` lists it: where its rows are and their
    JSON form (what ``recallbench cache import|export`` moves)."""

    @property
    def name(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    @property
    def columns(self) -> tuple[str, ...]: ...
    @property
    def insert(self) -> Literal["REPLACE", "IGNORE"]: ...
    @property
    def key(self) -> str: ...
    @property
    def prefixed(self) -> bool: ...
    def holds(self, namespace: str) -> bool: ...
    def row_json(self, row: Row) -> JSONValue: ...
    def json_row(self, value: JSONValue) -> Row: ...


@dataclass(frozen=True)
class Layout:
    """A cache file's schema (``CREATE TABLE IF NOT EXISTS ...``), its tables, and its name in
    messages (``LLM cache``)."""

    label: str
    schema: str
    tables: tuple[StoredTable, ...]

    def table(self, namespace: str, where: str) -> StoredTable:
        """The table holding ``namespace`` (a ``KeyError`` naming the file's namespaces)."""
        for table in self.tables:
            if table.holds(namespace):
                return table
        known = ", ".join(t.namespace + ("<model>" if t.prefixed else "") for t in self.tables)
        raise KeyError(f"{where}: no namespace {namespace!r} in a {self.label} (holds {known})")


def read_value(fn: Callable[[T], V], stored: T, where: str) -> V:
    """``fn(stored)``; its ``ValueError`` names ``where`` (file or server, namespace, key)."""
    try:
        return fn(stored)
    except (ValueError, TypeError, KeyError) as exc:
        raise ValueError(f"{where}: {exc}") from None
