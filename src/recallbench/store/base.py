"""The store's interface: JSON values by key in a namespace, an atomic ledger and rate buckets.

Every implementation (``SqliteStore``: one local file; ``RedisStore``: a server) offers the same
three things, each atomic across the processes (and, for a server, the machines) that share it:

- **values**: ``get_many(namespace, keys) -> {key: value}``, ``put_many(namespace, {key:
  value})``, ``scan(namespace)``, ``count(namespace)``, ``namespaces()``. Values are JSON
  (dicts, lists, strings, numbers; NaN refused); a key holds one value, and writers of one key
  write identical values (every cache keys by everything that decides its value), so the last
  write wins harmlessly. ``get``/``put`` are the one-key forms.
- **a ledger** (a sweep's budget): ``reserve(ledger, usd, max_calls, max_usd, holder)`` counts
  one request and reserves its worst-case dollars if both bounds still hold, else refuses and
  changes nothing; ``settle(ledger, reserved, spent, holder, tokens)`` replaces a reservation by
  what the reply cost and counts its tokens; ``totals(ledger)`` reads ``sent``/``spent``/
  ``reserved``/``tokens``. A reservation is kept by its ``holder`` (``host:pid``) too:
  ``holders(ledger)`` lists what each still holds, and ``release(ledger, holder)`` gives back
  what a holder that is gone (``kill -9``, a lost node) never settled. A check and its increment are
  one transaction (a SQLite ``BEGIN IMMEDIATE``, a Redis Lua script), so N processes never
  admit more than the bound together.
- **rate buckets**: ``take(bucket, amount, per_minute, capacity) -> seconds`` takes ``amount``
  tokens from a token bucket refilled at ``per_minute / 60`` per second and holding at most
  ``capacity``; the balance may go negative, and the caller waits the returned seconds before
  it sends (virtual scheduling: callers are served in the order they asked, whatever process
  they run in). The clock is the store's (the Redis server's ``TIME``; the local clock for the
  SQLite file of one machine).

A store that stops answering raises ``StoreLost`` (a ``RunStopped``): the run ends
``interrupted`` with one line and its resume command, never a silent fallback to another store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar, runtime_checkable

from recallbench.errors import RunStopped

# A value as the store gives it back (what ``json.loads`` makes of what ``put_many`` wrote): the
# one recursive JSON type, re-exported for the store's callers.
from recallbench.verdict import JSONValue as JSONValue


class StoreLost(RunStopped):
    """The shared store stopped answering (connection refused, reset, timed out)."""


@dataclass(frozen=True)
class Totals:
    """What a ledger counted: requests admitted, dollars spent, dollars reserved in flight (not
    settled yet), tokens of the replies settled."""

    sent: int = 0
    spent: float = 0.0
    reserved: float = 0.0
    tokens: int = 0


@runtime_checkable
class Store(Protocol):
    """Shared values, a ledger and rate buckets (module docstring). ``url`` names the store;
    ``server`` is True for a store that several machines share (Redis)."""

    url: str
    server: bool

    def get_many(self, namespace: str, keys: Sequence[str]) -> dict[str, JSONValue]: ...

    def put_many(self, namespace: str, values: Mapping[str, object]) -> None:
        """Store JSON-serializable ``values`` (anything else raises ``TypeError``)."""
        ...

    def scan(self, namespace: str) -> Iterator[tuple[str, JSONValue]]: ...

    def count(self, namespace: str) -> int: ...

    def namespaces(self) -> list[str]: ...

    def reserve(
        self,
        ledger: str,
        usd: float,
        max_calls: int | None,
        max_usd: float | None,
        holder: str = "",
    ) -> tuple[bool, Totals]: ...

    def settle(
        self, ledger: str, reserved: float, spent: float, holder: str = "", tokens: int = 0
    ) -> None: ...

    def totals(self, ledger: str) -> Totals: ...

    def holders(self, ledger: str) -> dict[str, float]: ...

    def release(self, ledger: str, holder: str) -> float: ...

    def take(self, bucket: str, amount: float, per_minute: float, capacity: float) -> float: ...

    def close(self) -> None: ...


def get(store: Store, namespace: str, key: str) -> JSONValue:
    """The value of one key (None: absent)."""
    return store.get_many(namespace, [key]).get(key)


def put(store: Store, namespace: str, key: str, value: object) -> None:
    """Store one value."""
    store.put_many(namespace, {key: value})


_SHARED: list[Store] = []  # the process's server store, chosen once by the command line


def use_store(store: Store | None) -> None:
    """Make ``store`` the process's shared store (None: the local SQLite files of each cache).

    The command line (``store=redis://...``) calls it once per job; the caches' builders ask
    ``server_store()`` so the judges' and protocols' own LLMs share it too."""
    _SHARED.clear()
    if store is not None:
        _SHARED.append(store)


def server_store() -> Store | None:
    """The store ``use_store`` set, when it is a server store (else None: SQLite files)."""
    return _SHARED[0] if _SHARED and _SHARED[0].server else None


class StoreBacked(Protocol):
    """A cache that lives on a store or in a SQLite file of its own (``store`` None)."""

    @property
    def store(self) -> Store | None: ...


C = TypeVar("C", bound=StoreBacked)


def process_cache(
    caches: dict[str, C], path: str | Path | None, make: Callable[[str | Path, Store | None], C]
) -> C | None:
    """The cache a process uses for ``path`` (None: no cache), made once by ``make(path, store)``
    and kept in ``caches``: on the server store when there is one (``server_store``), else in
    the SQLite file ``path`` (``":memory:"``: a private one). The LM-score and metric-result
    caches pick theirs this way; the caller holds its own lock."""
    if path is None:
        return None
    store = server_store()
    if store is not None:
        if store.url not in caches or caches[store.url].store is not store:
            caches[store.url] = make(path, store)
        return caches[store.url]
    key = str(Path(path).resolve()) if str(path) != ":memory:" else ":memory:"
    if key not in caches:
        caches[key] = make(path, None)
    return caches[key]


def shared_store() -> Store | None:
    """The store ``use_store`` set (SQLite or server), for the ledger and the rate buckets."""
    return _SHARED[0] if _SHARED else None
