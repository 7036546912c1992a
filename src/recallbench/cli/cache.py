"""``recallbench cache import|export``: move cache entries between SQLite files and a server store.

    recallbench cache import results/cache --store redis://login1:6379/0   # files -> server
    recallbench cache export results/cache --store redis://login1:6379/0   # server -> files

A local cache seeds a cluster's (import), and a cluster's comes back to a laptop (export). The
folder is a ``paths.cache_dir``: ``llm.sqlite`` (and any other reply cache file in it, such as a
judge's ``cache_path``), ``embeddings.sqlite``, ``lm_scores.sqlite`` and ``store.sqlite`` (other
namespaces, e.g. a metric cache). Entries keep their keys, so a reply cached on one side is a
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
from recallbench.embed.cache import EmbeddingCache
from recallbench.errors import ConfigError
from recallbench.llm.cache import NAMESPACE, Cache
from recallbench.llm.score_cache import ScoreCache
from recallbench.store import SqliteStore, Store, is_server, open_store, reach_store
from recallbench.store.redis_store import SPILL, RedisStore

_BATCH = 1000
_SKIP = ("plan:",)  # namespaces of one sweep, not caches


def _batches(items: Iterable[Any]) -> Iterator[list[Any]]:
    it = iter(items)
    while batch := list(islice(it, _BATCH)):
        yield batch


def _tables(path: Path) -> set[str]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def _add_by_model(
    add: Callable[[str, dict[str, Any]], None],
    prefix: str,
    entries: Iterable[tuple[str, str, Any]],
) -> None:
    """``add`` (model, key, value) rows under ``<prefix><model>``, a batch at a time."""
    for batch in _batches(entries):
        for model in {m for m, _, _ in batch}:
            add(f"{prefix}{model}", {k: v for m, k, v in batch if m == model})


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
    if not tables & {"replies", "embeddings", "scores", "kv"}:
        raise ConfigError(
            f"{path}: no cache table (expected replies, embeddings, scores or kv; found "
            f"{sorted(tables)})"
        )
    if "replies" in tables:
        cache = Cache(path)
        for batch in _batches(cache.items()):
            add(NAMESPACE, dict(batch))
        cache.close()
    if "embeddings" in tables:
        vectors = EmbeddingCache(path)
        _add_by_model(add, "emb:", vectors.entries())
        vectors.close()
    if "scores" in tables:
        scores = ScoreCache(path)
        _add_by_model(add, "lm:", scores.entries())
        if identities := scores.identities():
            add("lm-models", identities)
        scores.close()
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
    replies = Cache(folder / "llm.sqlite")
    vectors = EmbeddingCache(folder / "embeddings.sqlite")
    scores = ScoreCache(folder / "lm_scores.sqlite")
    other = SqliteStore(folder / "store.sqlite")
    try:
        for namespace in store.namespaces():
            if namespace.startswith(_SKIP):
                continue
            for batch in _batches(store.scan(namespace)):
                values = dict(batch)
                if namespace == NAMESPACE:
                    replies.put_many(values)
                elif namespace.startswith("emb:"):
                    vectors.put_entries(namespace.removeprefix("emb:"), values)
                elif namespace.startswith("lm:"):
                    scores.put_entries(namespace.removeprefix("lm:"), values)
                elif namespace == "lm-models":
                    for key, identity in values.items():
                        scores.register(key, identity)
                else:
                    other.put_many(namespace, values)
                counts[namespace] = counts.get(namespace, 0) + len(values)
    finally:
        for closable in (replies, vectors, scores, other):
            closable.close()
    return counts


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
