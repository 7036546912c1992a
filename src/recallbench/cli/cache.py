"""``recallbench cache import|export``: move cache entries between SQLite files and a server store.

    recallbench cache import results/cache --store redis://login1:6379/0   # files -> server
    recallbench cache export results/cache --store redis://login1:6379/0   # server -> files

A local cache seeds a cluster's (import), and a cluster's comes back to a laptop (export). The
folder is a ``paths.cache_dir``: ``llm.sqlite`` (and any other reply cache file in it, such as a
judge's ``cache_path``), ``embeddings.sqlite``, ``lm_scores.sqlite``, ``metric_results.sqlite``
and ``store.sqlite`` (other namespaces). Every cache file is read and written through the one
cache layer (``store.values``), whose namespaces are the server's. Entries keep their keys, so a reply cached on one side is a
hit on the other; an entry present on both sides is overwritten with an identical value. Plan
keys and the sweep ledgers stay where they are (they belong to one sweep on one store).
"""

from __future__ import annotations

import argparse
import shlex
import sqlite3
import sys
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from recallbench.cli.config import user_errors
from recallbench.embed.cache import LAYOUT as VECTORS
from recallbench.errors import ConfigError
from recallbench.llm.cache import LAYOUT as REPLIES
from recallbench.llm.score_cache import LAYOUT as SCORES
from recallbench.metrics.cache import LAYOUT as RESULTS
from recallbench.store import SqliteStore, Store, is_server, open_store, reach_store
from recallbench.store.redis_store import SPILL, RedisStore
from recallbench.store.values import Layout, SqliteValues

_BATCH = 1000
_SKIP = ("plan:",)  # namespaces of one sweep, not caches


def _batches(items: Iterable[Any]) -> Iterator[list[Any]]:
    it = iter(items)
    while batch := list(islice(it, _BATCH)):
        yield batch


def _tables(path: Path) -> set[str]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


# Each cache's file in a cache folder and its layout (``store.values``): a namespace a layout
# holds is exported to that file; any other (not a cache's) goes to store.sqlite.
FILES = {
    "llm.sqlite": REPLIES,
    "embeddings.sqlite": VECTORS,
    "lm_scores.sqlite": SCORES,
    "metric_results.sqlite": RESULTS,
}


def _layouts(tables: set[str]) -> list[Layout]:
    """The cache layouts whose tables a file has."""
    return [lay for lay in FILES.values() if any(t.name in tables for t in lay.tables)]


def import_folder(folder: Path, store: Store) -> dict[str, int]:
    """Copy every cache file of ``folder`` (or the one SQLite file ``folder``: a cache file, or
    a node's spill file of writes a lost server could not take) into ``store``; return entries
    per namespace. A folder's own spill file is left to its node's next job."""
    counts: dict[str, int] = {}

    def add(namespace: str, values: dict[str, Any]) -> None:
        store.put_many(namespace, values)
        counts[namespace] = counts.get(namespace, 0) + len(values)

    files = [folder] if folder.is_file() else sorted(folder.glob("*.sqlite"))
    for path in files:
        if path.name == SPILL and path != folder:
            continue
        _import_file(path, add)
    return counts


def _import_file(path: Path, add: Callable[[str, dict[str, Any]], None]) -> None:
    """``add`` every entry of one SQLite cache file, by namespace."""
    try:
        tables = _tables(path)
    except sqlite3.DatabaseError as exc:
        raise ConfigError(f"{path}: not a SQLite cache file ({exc})") from None
    layouts = _layouts(tables)
    if not layouts and "kv" not in tables:
        known = sorted({t.name for lay in FILES.values() for t in lay.tables} | {"kv"})
        raise ConfigError(
            f"{path}: no cache table (expected one of {', '.join(known)}; found {sorted(tables)})"
        )
    for layout in layouts:
        values = SqliteValues(path, layout)
        try:
            for namespace in values.namespaces():
                for batch in _batches(values.scan(namespace)):
                    add(namespace, dict(batch))
        finally:
            values.close()
    if "kv" in tables:
        local = SqliteStore(path)
        for namespace in local.namespaces():
            if not namespace.startswith(_SKIP):
                for batch in _batches(local.scan(namespace)):
                    add(namespace, dict(batch))
        local.close()


def export_folder(store: Store, folder: Path) -> dict[str, int]:
    """Copy every cache namespace of ``store`` into the SQLite files of ``folder``."""
    counts: dict[str, int] = {}
    files = [SqliteValues(folder / name, layout) for name, layout in FILES.items()]
    other = SqliteStore(folder / "store.sqlite")
    try:
        for namespace in store.namespaces():
            if namespace.startswith(_SKIP):
                continue
            into = next((f for f in files if _holds(f.layout, namespace)), None)
            for batch in _batches(store.scan(namespace)):
                if into is None:
                    other.put_many(namespace, dict(batch))
                else:
                    into.put_json(namespace, dict(batch))
                counts[namespace] = counts.get(namespace, 0) + len(batch)
    finally:
        for file in files:
            file.close()
        other.close()
    return counts


def _holds(layout: Layout, namespace: str) -> bool:
    return any(t.holds(namespace) for t in layout.tables)


def cache_main(argv: list[str] | None = None) -> None:
    """Console entry point ``recallbench cache import|export <cache folder> --store URL``."""
    parser = argparse.ArgumentParser(
        prog="recallbench cache",
        description="Move cache entries between a folder of SQLite caches (paths.cache_dir) and "
        "a server store: import (files -> server), export (server -> files).",
    )
    parser.add_argument("direction", choices=("import", "export"))
    parser.add_argument(
        "folder",
        help="a cache folder (paths.cache_dir), e.g. results/cache; import also takes one "
        "SQLite file, e.g. a node's spill file <cache_dir>/redis-spill.sqlite",
    )
    parser.add_argument("--store", required=True, help="the server: redis://host:port/db")
    ns = parser.parse_args(argv)
    retry = shlex.join(["recallbench", "cache", *(sys.argv[2:] if argv is None else argv)])
    with user_errors("recallbench cache"):
        folder = Path(ns.folder)
        if not is_server(ns.store):
            raise ConfigError(f"--store {ns.store}: expected a server, redis://host:port/db")
        if ns.direction == "import" and not (folder.is_dir() or folder.is_file()):
            raise ConfigError(
                f"{folder}: no such cache folder (paths.cache_dir, e.g. results/cache) or "
                "SQLite cache file"
            )
        reach_store(ns.store, retry)  # before any file is read or folder made
        # a folder's spill file reaches the server as the store connects (open_store); a spill
        # file named on its own is read as it is (kept: its node's next job sends it again)
        store = open_store(ns.store, folder) if folder.is_dir() else RedisStore(ns.store)
        try:
            if ns.direction == "import":
                counts = import_folder(folder, store)
            else:
                counts = export_folder(store, folder)
        finally:
            store.close()
    arrow = f"{folder} -> {ns.store}" if ns.direction == "import" else f"{ns.store} -> {folder}"
    total = sum(counts.values())
    detail = ", ".join(f"{n}: {c}" for n, c in sorted(counts.items())) or "nothing to copy"
    print(f"recallbench cache {ns.direction}: {total} entries {arrow} ({detail})")
