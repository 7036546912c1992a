"""One store for a sweep: the caches, the sweep's ledger and the rate buckets (issue 34).

``store=sqlite`` (default): one machine. The caches are the SQLite files of ``paths.cache_dir``
(``llm.sqlite``, ``embeddings.sqlite``, ``lm_scores.sqlite``, ``metric_results.sqlite``;
every cache reads and writes through the one cache layer, ``store.values``) and the ledger and
rate buckets live in ``<paths.cache_dir>/store.sqlite`` (``SqliteStore``), so the processes of one machine
share one budget and one rate. ``store=redis://host:port/db``: many processes on many machines
(``RedisStore``); every cache, ledger and bucket lives on the server.

The interface (``store.base.Store``), for anything else that wants to share values:

    from recallbench.store import server_store, shared_store
    store = shared_store()                       # the job's store (None outside a run)
    store.put_many("metric:mauve", {key: {"value": 0.71}})
    store.get_many("metric:mauve", [key])        # -> {key: {"value": 0.71}} (absent keys absent)
    store.reserve(ledger, usd, max_calls, max_usd, holder) / store.settle(...) / store.totals(ledger)
    store.holders(ledger) / store.release(ledger, holder)  # reservations by host:pid
    store.take(bucket, amount, per_minute, capacity)  # -> seconds to wait

``reach_store(spec, retry)`` is what every command that takes ``store=`` calls first: an
unreachable server is one line (exit 75, or 2 for a URL that cannot be right), no folder made.
``recallbench cache export|import`` (``store.transfer``) moves entries between the SQLite files
and a server.
"""

from __future__ import annotations

from pathlib import Path

from recallbench.errors import ConfigError
from recallbench.store.base import (
    JSONValue,
    Store,
    StoreLost,
    Totals,
    get,
    process_cache,
    put,
    server_store,
    shared_store,
    use_store,
)
from recallbench.store.fs import network_fs, unwritable
from recallbench.store.sqlite import SqliteStore

__all__ = [
    "JSONValue",
    "SERVER_SCHEMES",
    "SqliteStore",
    "Store",
    "StoreLost",
    "Totals",
    "get",
    "network_fs",
    "open_store",
    "put",
    "reach_store",
    "process_cache",
    "server_store",
    "shared_store",
    "unwritable",
    "use_store",
]
SERVER_SCHEMES = ("redis://", "rediss://", "unix://")


def is_server(spec: str) -> bool:
    """Does ``store=<spec>`` name a server?"""
    return str(spec).startswith(SERVER_SCHEMES)


def reach_store(spec: str, retry: str) -> None:
    """Check, before any work and before any folder is made, that the server ``store=<spec>``
    names answers (``sqlite``: nothing to reach): ``ConfigError`` (exit 2) for a URL that
    cannot be right, ``StoreUnreachable`` (exit 75) for a server that may come back; each one
    line ending in ``retry``, the command to run again."""
    if is_server(spec):
        from recallbench.store.reach import reach

        reach(str(spec), retry)


def open_store(spec: str, cache_dir: str | Path) -> Store:
    """The store ``store=<spec>`` names: ``sqlite`` (``<cache_dir>/store.sqlite``) or a Redis
    URL (its spill file for writes a lost connection could not deliver in ``cache_dir``)."""
    spec = str(spec or "sqlite")
    if spec == "sqlite":
        return SqliteStore(Path(cache_dir) / "store.sqlite")
    if is_server(spec):
        from recallbench.store.redis_store import SPILL, RedisStore

        return RedisStore(spec, spill=Path(cache_dir) / SPILL)
    raise ConfigError(
        f"store={spec!r}: expected sqlite (one machine) or redis://host:port/db (a Redis or "
        "Valkey server shared by every job)"
    )
