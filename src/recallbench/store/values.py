"""The one cache layer: values by namespace and key, on a server store or in a local file.

The four caches (LLM replies ``llm.cache``, LM scores ``llm.score_cache``, embeddings
``embed.cache``, metric results ``metrics.cache``) keep their values through a ``Values``, each
naming the ``Table`` (below) that says how one kind of value is kept:

    values = cache_values(path, store, LAYOUT)     # the server store's, else the SQLite file's
    values.put(VECTORS, "emb:minilm", {key: vector})
    values.get(VECTORS, "emb:minilm", [key])       # -> {key: vector} (absent keys absent)
    values.count("emb:minilm"); values.namespaces(); values.close()

With a server store (``store=redis://...``) a value is kept as JSON in the store's namespace
(``ServerValues``; closing it leaves the store open: the run closes it). Without one it lives in
the cache's own SQLite file (``SqliteValues``), in the tables older runs wrote, so a cache file
from before this layer reads as it is and one written now reads with older code. A ``Layout``
names the file's schema and its tables; a ``Table`` which namespace it holds (exact, or a prefix
such as ``emb:`` whose rest is the table's ``model`` column) and how a value maps to the table's
columns and to JSON. The namespaces are the server's, and ``get_json``/``put_json``/``scan``
give any namespace's values as JSON, so ``recallbench cache import|export`` moves them as they
are. A value read back wrong (a corrupt row, a wrong shape) is a ``ValueError`` naming the file
or server, the namespace and the key.

The file: one connection per process shared by its threads under a lock, WAL with a busy timeout,
created under a file lock (``io.connect_shared``); a batch is one ``BEGIN IMMEDIATE`` transaction
(``io.write_immediate``). Writers of one key write identical values (each cache keys by
everything that decides its value), so the last write wins harmlessly.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from recallbench.io import connect_shared, unusable_cache, write_immediate
from recallbench.store.base import JSONValue, Store
from recallbench.store.tables import (
    Layout,
    Row,
    StoredTable,
    Table,
    dumps,
    json_column,
    json_value,
    read_value,
)

__all__ = [
    "Layout",
    "Row",
    "ServerValues",
    "SqliteValues",
    "Table",
    "Values",
    "cache_values",
    "dumps",
    "json_column",
    "json_value",
]

_CHUNK = 400  # keys per SELECT: SQLite's default limit on host parameters is 999
V = TypeVar("V")


class Values(Protocol):
    """Values by namespace and key (module docstring)."""

    @property
    def url(self) -> str: ...

    def get(self, table: Table[V], namespace: str, keys: Sequence[str]) -> dict[str, V]: ...

    def get_one(self, table: Table[V], namespace: str, key: str) -> V | None: ...

    def put(self, table: Table[V], namespace: str, values: Mapping[str, V]) -> None: ...

    def get_json(self, namespace: str, keys: Sequence[str]) -> dict[str, JSONValue]: ...

    def put_json(self, namespace: str, values: Mapping[str, JSONValue]) -> None: ...

    def scan(self, namespace: str) -> Iterator[tuple[str, JSONValue]]: ...

    def count(self, namespace: str) -> int: ...

    def namespaces(self) -> list[str]: ...

    def close(self) -> None: ...


class ServerValues:
    """The values of a server store, as JSON; ``close`` leaves the store open (its owner
    closes it)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    @property
    def url(self) -> str:
        return self.store.url

    def get(self, table: Table[V], namespace: str, keys: Sequence[str]) -> dict[str, V]:
        got = self.store.get_many(namespace, keys)
        where = f"{self.url} {namespace}"
        return {k: read_value(table.from_json, v, f"{where} {k}") for k, v in got.items()}

    def get_one(self, table: Table[V], namespace: str, key: str) -> V | None:
        return self.get(table, namespace, [key]).get(key)

    def put(self, table: Table[V], namespace: str, values: Mapping[str, V]) -> None:
        if values:
            self.store.put_many(namespace, {k: table.to_json(v) for k, v in values.items()})

    def get_json(self, namespace: str, keys: Sequence[str]) -> dict[str, JSONValue]:
        return self.store.get_many(namespace, keys)

    def put_json(self, namespace: str, values: Mapping[str, JSONValue]) -> None:
        if values:
            self.store.put_many(namespace, values)

    def scan(self, namespace: str) -> Iterator[tuple[str, JSONValue]]:
        return self.store.scan(namespace)

    def count(self, namespace: str) -> int:
        return self.store.count(namespace)

    def namespaces(self) -> list[str]:
        return self.store.namespaces()

    def close(self) -> None:
        """Nothing: the run closes its store."""


class SqliteValues:
    """A cache's values in its own SQLite file, in the tables of ``layout``.

    Args:
        path: the database file (its folder is created); ``":memory:"`` for a private one.
        layout: the file's schema and tables.
        busy_timeout_s: how long a writer waits for another process's lock before failing.
    """

    def __init__(self, path: str | Path, layout: Layout, busy_timeout_s: float = 60.0) -> None:
        self.path = str(path)
        self.layout = layout
        self._conn = connect_shared(self.path, layout.schema, layout.label, busy_timeout_s)
        self._lock = threading.Lock()
        self._sql: dict[tuple[str, int], str] = {}  # (table, keys) -> its SELECT
        with self._lock, unusable_cache(self.path, layout.label):
            for table in layout.tables:
                self._conn.execute(f"SELECT COUNT(*) FROM {table.name} LIMIT 1").fetchone()

    @property
    def url(self) -> str:
        return self.path

    @staticmethod
    def _where(table: StoredTable, namespace: str) -> tuple[str, list[object]]:
        """The WHERE clause (and its parameters) selecting ``namespace``'s rows."""
        if table.prefixed:
            return "model = ? AND ", [namespace[len(table.namespace) :]]
        return "", []

    def _select(self, table: StoredTable, n: int) -> str:
        """The SELECT of ``n`` keys of ``table`` (kept: a warm lookup builds no SQL)."""
        sql = self._sql.get((table.name, n))
        if sql is None:
            model = "model = ? AND " if table.prefixed else ""
            keys = "= ?" if n == 1 else f"IN ({','.join('?' * n)})"
            sql = (
                f"SELECT {table.key}, {', '.join(table.columns)} FROM {table.name} "
                f"WHERE {model}{table.key} {keys}"
            )
            self._sql[table.name, n] = sql
        return sql

    def _rows(self, table: StoredTable, namespace: str, keys: Sequence[str]) -> Iterator[Row]:
        """The stored rows (key first, then ``table.columns``) of ``keys``."""
        _, params = self._where(table, namespace)
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            sql = self._select(table, len(chunk))
            with self._lock:
                rows = self._conn.execute(sql, [*params, *chunk]).fetchall()
            yield from rows

    def get(self, table: Table[V], namespace: str, keys: Sequence[str]) -> dict[str, V]:
        """The stored values of ``keys`` (keys not stored are absent)."""
        found: dict[str, V] = {}
        for key, *stored in self._rows(table, namespace, keys):
            try:  # no f-string per row: a warm batch reads hundreds
                found[str(key)] = table.from_row(stored)
            except (ValueError, TypeError, KeyError) as exc:
                raise ValueError(f"{self.path} {namespace} {key}: {exc}") from None
        return found

    def get_one(self, table: Table[V], namespace: str, key: str) -> V | None:
        """The stored value of ``key`` (None: not stored): one lookup, as a generator's cache
        check makes per call."""
        sql = self._select(table, 1)
        params = (namespace[len(table.namespace) :], key) if table.prefixed else (key,)
        with self._lock:
            row = self._conn.execute(sql, params).fetchone()
        if row is None:
            return None
        try:
            return table.from_row(row[1:])
        except (ValueError, TypeError, KeyError) as exc:
            raise ValueError(f"{self.path} {namespace} {key}: {exc}") from None

    def _write(self, table: StoredTable, namespace: str, rows: Sequence[Row]) -> None:
        """Store rows (key first, then the value's columns) in one transaction."""
        if not rows:
            return
        head = [namespace[len(table.namespace) :]] if table.prefixed else []
        marks = ",".join("?" * (len(head) + len(rows[0])))
        sql = f"INSERT OR {table.insert} INTO {table.name} VALUES ({marks})"
        with self._lock:
            write_immediate(self._conn, sql, [(*head, *row) for row in rows])

    def put(self, table: Table[V], namespace: str, values: Mapping[str, V]) -> None:
        """Store ``key -> value`` rows in one transaction."""
        self._write(table, namespace, [(key, *table.to_row(v)) for key, v in values.items()])

    def get_json(self, namespace: str, keys: Sequence[str]) -> dict[str, JSONValue]:
        """The stored values of ``keys`` as a server holds them."""
        table = self.layout.table(namespace, self.path)
        return {
            str(key): read_value(table.row_json, stored, f"{self.path} {namespace} {key}")
            for key, *stored in self._rows(table, namespace, keys)
        }

    def put_json(self, namespace: str, values: Mapping[str, JSONValue]) -> None:
        """Store values given as a server holds them (``recallbench cache export``)."""
        table = self.layout.table(namespace, self.path)
        where = f"{self.path} {namespace}"
        rows = [(k, *read_value(table.json_row, v, f"{where} {k}")) for k, v in values.items()]
        self._write(table, namespace, rows)

    def scan(self, namespace: str) -> Iterator[tuple[str, JSONValue]]:
        """Every (key, value) of ``namespace``, values as a server holds them."""
        table = self.layout.table(namespace, self.path)
        clause, params = self._where(table, namespace)
        sql = f"SELECT {table.key}, {', '.join(table.columns)} FROM {table.name}"
        sql += f" WHERE {clause.removesuffix(' AND ')}" if clause else ""
        with self._lock:
            rows = self._conn.execute(sql, params).fetchall()
        for key, *stored in rows:
            yield str(key), read_value(table.row_json, stored, f"{self.path} {namespace} {key}")

    def count(self, namespace: str) -> int:
        """How many keys ``namespace`` holds."""
        table = self.layout.table(namespace, self.path)
        clause, params = self._where(table, namespace)
        where = f" WHERE {clause.removesuffix(' AND ')}" if clause else ""
        with self._lock:
            row = self._conn.execute(f"SELECT COUNT(*) FROM {table.name}{where}", params)
            return int(row.fetchone()[0])

    def namespaces(self) -> list[str]:
        """The namespaces holding at least one key."""
        found = []
        with self._lock:
            for table in self.layout.tables:
                if table.prefixed:
                    models = self._conn.execute(f"SELECT DISTINCT model FROM {table.name}")
                    found += [table.namespace + str(m) for (m,) in models.fetchall()]
                elif self._conn.execute(f"SELECT 1 FROM {table.name} LIMIT 1").fetchone():
                    found.append(table.namespace)
        return sorted(found)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()

    def __repr__(self) -> str:
        return f"SqliteValues({self.path!r}, {self.layout.label!r})"


def cache_values(
    path: str | Path, store: Store | None, layout: Layout, busy_timeout_s: float = 60.0
) -> Values:
    """A cache's values: the server store's when there is one, else the SQLite file ``path``
    in ``layout`` (``busy_timeout_s``: how long a writer waits for another process's lock)."""
    if store is not None:
        return ServerValues(store)
    return SqliteValues(path, layout, busy_timeout_s)
