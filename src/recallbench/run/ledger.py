"""A sweep's ledger seen from outside its jobs: ``recallbench status`` and a resume.

``sweep.json`` names the store that holds the ledger (``ledger``: ``sqlite:<cache_dir>/
store.sqlite`` or the server's URL); ``ledger_store`` opens it (a server is reached first: one
line when it does not answer) without a spill file, so reading writes nothing. Every
reservation is kept by its holder, the ``host:pid`` of the process that made it; a process
killed mid-call (``kill -9``, a lost node) never settles its own, which would hold part of
``sweep.max_usd`` for good. ``release_gone`` gives back what holders that are gone reserved
(``run.sweep.holder_gone``): ``recallbench status --release`` and every resumed job call it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path

from recallbench.records import JSON
from recallbench.run.sweep import SWEEP_FILE, LedgerView, holder_gone, read_sweep
from recallbench.store import SqliteStore, Store, is_server, reach_store

__all__ = ["ledger_store", "ledger_view", "release_gone", "release_on_resume"]


@contextlib.contextmanager
def ledger_store(data: Mapping[str, JSON], retry: str) -> Iterator[Store | None]:
    """The store holding the ledger of the sweep ``data`` (its ``sweep.json``); None: no
    ledger recorded (a sweep from before) or its SQLite file is not here."""
    where = str(data.get("ledger") or data.get("store") or "")
    store: Store | None = None
    if is_server(where):
        reach_store(where, retry)
        from recallbench.store.redis_store import RedisStore

        store = RedisStore(where)
    elif where.startswith("sqlite:") and Path(where.removeprefix("sqlite:")).is_file():
        store = SqliteStore(where.removeprefix("sqlite:"))
    try:
        yield store
    finally:
        if store is not None:
            store.close()


def _name(data: Mapping[str, JSON]) -> str:
    return f"sweep:{data.get('sweep')}"


def ledger_view(store: Store, data: Mapping[str, JSON]) -> LedgerView:
    """The ledger's totals and holders, and which holders are gone."""
    held = store.holders(_name(data))
    gone = frozenset(h for h in held if holder_gone(h, data.get("jobs") or {}))
    return LedgerView(store.totals(_name(data)), held, gone)


def release_gone(store: Store, data: Mapping[str, JSON]) -> str | None:
    """Give back what gone holders reserved; the line that says how much (None: nothing)."""
    jobs = data.get("jobs") or {}
    gone = [h for h in store.holders(_name(data)) if holder_gone(h, jobs)]
    released = {h: store.release(_name(data), h) for h in gone}
    if not released:
        return None
    return (
        f"recallbench: released ${sum(released.values()):.4f} of sweep {data.get('sweep')} "
        f"reserved by {len(released)} process(es) that are gone ({', '.join(released)})"
    )


def release_on_resume(store: Store, sweep_dir: Path) -> str | None:
    """A resumed job first gives back what gone holders of its sweep reserved; the line that
    says how much (None: nothing to give back, or no ``sweep.json``)."""
    if not (sweep_dir / SWEEP_FILE).is_file():
        return None
    return release_gone(store, read_sweep(sweep_dir / SWEEP_FILE))
