"""The store in one local SQLite file (``store=sqlite``, the default): one machine, many processes.

``<paths.cache_dir>/store.sqlite`` holds the sweep ledgers, the rate buckets and any namespace
of values (the three caches of replies, embeddings and LM scores keep their own files beside
it, ``llm.sqlite``, ``embeddings.sqlite``, ``lm_scores.sqlite``, as before the store existed).
WAL mode with a busy timeout; every read-modify-write (a reservation, a bucket) is one ``BEGIN
IMMEDIATE`` transaction, so the processes of a joblib sweep or of a SLURM array on one node
see one budget and one rate. SQLite's locks need a local disk: the command line refuses a cache
folder on a network file system (``store.fs``).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from recallbench.io import connect_shared, db_file, unusable_cache
from recallbench.store.base import JSONValue, Totals

_SCHEMA = """
CREATE TABLE IF NOT EXISTS kv (
    ns TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (ns, key)
);
CREATE TABLE IF NOT EXISTS ledger (
    name TEXT PRIMARY KEY,
    sent INTEGER NOT NULL,
    spent REAL NOT NULL,
    reserved REAL NOT NULL,
    tokens INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS holds (
    ledger TEXT NOT NULL,
    holder TEXT NOT NULL,
    reserved REAL NOT NULL,
    PRIMARY KEY (ledger, holder)
);
CREATE TABLE IF NOT EXISTS buckets (
    name TEXT PRIMARY KEY,
    tokens REAL NOT NULL,
    updated REAL NOT NULL
);
"""
_CHUNK = 400  # keys per SELECT: SQLite's default limit on host parameters is 999


def dumps(value: object) -> str:
    """A value as the store writes it (canonical JSON, NaN refused)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, sort_keys=True)


class SqliteStore:
    """The store interface (``store.base``) on one SQLite file.

    Args:
        path: the database file (its folder is created).
    """

    server = False

    def __init__(self, path: str | Path) -> None:
        self.path = db_file(path, "store")
        self.url = f"sqlite:{self.path}"
        self._conn = connect_shared(self.path, _SCHEMA, "store")
        self._lock = threading.Lock()
        self._add_tokens_column()

    def _add_tokens_column(self) -> None:
        """A store file from before the ledger counted tokens gets the column (once: the check
        and the change are one transaction, so concurrent openers add it once)."""
        with self._lock, self._transaction():
            columns = {r[1] for r in self._conn.execute("PRAGMA table_info(ledger)")}
            if "tokens" not in columns:
                self._conn.execute(
                    "ALTER TABLE ledger ADD COLUMN tokens INTEGER NOT NULL DEFAULT 0"
                )

    # -- values --------------------------------------------------------------------------------

    def get_many(self, namespace: str, keys: Sequence[str]) -> dict[str, JSONValue]:
        keys = list(dict.fromkeys(keys))
        found: dict[str, JSONValue] = {}
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            with self._lock, unusable_cache(self.path, "store"):
                rows = self._conn.execute(
                    f"SELECT key, value FROM kv WHERE ns = ? AND key IN ({marks})",
                    [namespace, *chunk],
                ).fetchall()
            found.update((k, json.loads(v)) for k, v in rows)
        return found

    def put_many(self, namespace: str, values: Mapping[str, object]) -> None:
        rows = [(namespace, k, dumps(v)) for k, v in values.items()]
        if rows:
            with self._lock:
                self._write("INSERT OR REPLACE INTO kv VALUES (?, ?, ?)", rows)

    def scan(self, namespace: str) -> Iterator[tuple[str, JSONValue]]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT key, value FROM kv WHERE ns = ? ORDER BY key", (namespace,)
            ).fetchall()
        for key, value in rows:
            yield key, json.loads(value)

    def count(self, namespace: str) -> int:
        with self._lock:
            row = self._conn.execute("SELECT COUNT(*) FROM kv WHERE ns = ?", (namespace,))
            return int(row.fetchone()[0])

    def namespaces(self) -> list[str]:
        with self._lock:
            rows = self._conn.execute("SELECT DISTINCT ns FROM kv ORDER BY ns").fetchall()
        return [r[0] for r in rows]

    # -- the ledger ----------------------------------------------------------------------------

    def reserve(
        self,
        ledger: str,
        usd: float,
        max_calls: int | None,
        max_usd: float | None,
        holder: str = "",
    ) -> tuple[bool, Totals]:
        with self._lock, self._transaction():
            now = self._totals(ledger)
            if (max_calls is not None and now.sent >= max_calls) or (
                max_usd is not None and now.spent + now.reserved + usd > max_usd + 1e-9
            ):
                return False, now
            self._conn.execute(
                "INSERT INTO ledger (name, sent, spent, reserved) VALUES (?, 1, 0.0, ?) ON "
                "CONFLICT(name) DO UPDATE SET sent = sent + 1, reserved = reserved + "
                "excluded.reserved",
                (ledger, usd),
            )
            self._conn.execute(
                "INSERT INTO holds VALUES (?, ?, ?) ON CONFLICT(ledger, holder) DO UPDATE SET "
                "reserved = reserved + excluded.reserved",
                (ledger, holder, usd),
            )
            return True, Totals(now.sent + 1, now.spent, now.reserved + usd, now.tokens)

    def settle(
        self, ledger: str, reserved: float, spent: float, holder: str = "", tokens: int = 0
    ) -> None:
        with self._lock, self._transaction():
            self._conn.execute(
                "UPDATE ledger SET reserved = MAX(0.0, reserved - ?), spent = spent + ?, "
                "tokens = tokens + ? WHERE name = ?",
                (reserved, spent, tokens, ledger),
            )
            self._conn.execute(
                "UPDATE holds SET reserved = reserved - ? WHERE ledger = ? AND holder = ?",
                (reserved, ledger, holder),
            )
            self._conn.execute(
                "DELETE FROM holds WHERE ledger = ? AND holder = ? AND reserved <= 1e-12",
                (ledger, holder),
            )

    def totals(self, ledger: str) -> Totals:
        with self._lock:
            return self._totals(ledger)

    def _totals(self, ledger: str) -> Totals:
        row = self._conn.execute(
            "SELECT sent, spent, reserved, tokens FROM ledger WHERE name = ?", (ledger,)
        ).fetchone()
        if row is None:
            return Totals()
        return Totals(int(row[0]), float(row[1]), float(row[2]), int(row[3]))

    def holders(self, ledger: str) -> dict[str, float]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT holder, reserved FROM holds WHERE ledger = ? ORDER BY holder", (ledger,)
            ).fetchall()
        return {str(h): float(r) for h, r in rows}

    def release(self, ledger: str, holder: str) -> float:
        with self._lock, self._transaction():
            row = self._conn.execute(
                "SELECT reserved FROM holds WHERE ledger = ? AND holder = ?", (ledger, holder)
            ).fetchone()
            if row is None:
                return 0.0
            self._conn.execute(
                "UPDATE ledger SET reserved = MAX(0.0, reserved - ?) WHERE name = ?",
                (row[0], ledger),
            )
            self._conn.execute(
                "DELETE FROM holds WHERE ledger = ? AND holder = ?", (ledger, holder)
            )
            return float(row[0])

    # -- rate buckets --------------------------------------------------------------------------

    def take(self, bucket: str, amount: float, per_minute: float, capacity: float) -> float:
        rate = per_minute / 60.0
        with self._lock, self._transaction():
            now = time.time()
            row = self._conn.execute(
                "SELECT tokens, updated FROM buckets WHERE name = ?", (bucket,)
            ).fetchone()
            tokens, updated = (capacity, now) if row is None else (float(row[0]), float(row[1]))
            tokens = min(capacity, tokens + max(0.0, now - updated) * rate) - amount
            self._conn.execute(
                "INSERT OR REPLACE INTO buckets VALUES (?, ?, ?)", (bucket, tokens, now)
            )
        return 0.0 if tokens >= 0 else -tokens / rate

    # -- plumbing ------------------------------------------------------------------------------

    def _transaction(self) -> _Immediate:
        return _Immediate(self._conn)

    def _write(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        with self._transaction():
            self._conn.executemany(sql, rows)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __repr__(self) -> str:
        return f"SqliteStore({self.path!r})"


class _Immediate:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on an error): the write lock up front,
    so concurrent writers wait through SQLite's busy handler instead of failing an upgrade."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, *rest: object) -> None:
        self.conn.execute("ROLLBACK" if kind is not None else "COMMIT")
