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
from typing import Any, Generic, Literal, TypeVar

from recallbench.store.base import JSONValue

__all__ = ["Layout", "Row", "Table", "dumps", "json_value", "read_value"]

Row = Sequence[Any]  # a row's columns (as sqlite3 gives them, or to write)
V = TypeVar("V")


def dumps(value: object) -> str:
    """A value as the caches write JSON text (canonical: sorted keys, NaN refused)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, sort_keys=True)


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


@dataclass(frozen=True)
class Layout:
    """A cache file's schema (``CREATE TABLE IF NOT EXISTS ...``), its tables, and its name in
    messages (``LLM cache``)."""

    label: str
    schema: str
    tables: tuple[Table[Any], ...]

    def table(self, namespace: str, where: str) -> Table[Any]:
        """The table holding ``namespace`` (a ``KeyError`` naming the file's namespaces)."""
        for table in self.tables:
            if table.holds(namespace):
                return table
        known = ", ".join(t.namespace + ("<model>" if t.prefixed else "") for t in self.tables)
        raise KeyError(f"{where}: no namespace {namespace!r} in a {self.label} (holds {known})")


def read_value(fn: Callable[[Any], V], stored: object, where: str) -> V:
    """``fn(stored)``; its ``ValueError`` names ``where`` (file or server, namespace, key)."""
    try:
        return fn(stored)
    except (ValueError, TypeError, KeyError) as exc:
        raise ValueError(f"{where}: {exc}") from None
