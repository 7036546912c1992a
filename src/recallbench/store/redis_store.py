"""The store on a Redis (or Valkey) server (``store=redis://host:port/db``): many machines.

Every process of a sweep, on any node, reads and writes the same server: a reply one job paid
for is a hit for every other job at once, one ledger bounds the sweep, one bucket per endpoint
holds its rate. Layout (keys under ``recallbench:``): a namespace is one hash
``recallbench:kv:<namespace>`` (field = key, value = canonical JSON), listed in the set
``recallbench:namespaces``; a ledger is the hash ``recallbench:ledger:<name>`` (``sent``,
``spent``, ``reserved``, ``tokens``; what each ``host:pid`` holds in ``recallbench:holds:<name>``),
changed only by Lua scripts (a check and its increment are atomic);
a rate bucket is the hash ``recallbench:bucket:<name>`` (``tokens``, ``updated``) on the
server's clock (``TIME``), so machines with skewed clocks share one rate.

Persistence is the server's: start it with ``--appendonly yes`` (README, "Clusters"); a server
without AOF loses the caches and the sweep's ledger when it restarts, which ``check_persistence``
says in one line. A connection that fails (after redis-py's bounded retries) raises
``StoreLost``: the run stops ``interrupted``. A reply that could not be written is not lost: it
is kept in a local spill file (``spill``) and written to the server when the next job connects.

Deviations: none of the papers ran sweeps; the choice of Redis (rather than a SQL server) is
ours: one key lookup per cached call and atomic scripts are what the harness needs.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from recallbench.errors import ConfigError
from recallbench.store.base import JSONValue, StoreLost, Totals
from recallbench.store.sqlite import SqliteStore, dumps

PREFIX = "recallbench:"
SPILL = "redis-spill.sqlite"  # in a node's paths.cache_dir: writes a lost server could not take
_CHUNK = 1000

# KEYS[1] ledger, KEYS[2] its holders; ARGV max_calls (-1: none), max_usd (-1: none), usd,
# holder. Returns
# {admitted 0/1, sent, spent, reserved} as strings (Lua numbers would be truncated to integers).
_RESERVE = """
local sent = tonumber(redis.call('HGET', KEYS[1], 'sent') or '0')
local spent = tonumber(redis.call('HGET', KEYS[1], 'spent') or '0')
local reserved = tonumber(redis.call('HGET', KEYS[1], 'reserved') or '0')
local max_calls, max_usd, usd = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local ok = 1
if max_calls >= 0 and sent >= max_calls then ok = 0 end
if max_usd >= 0 and spent + reserved + usd > max_usd + 1e-9 then ok = 0 end
if ok == 1 then
  sent = redis.call('HINCRBY', KEYS[1], 'sent', 1)
  reserved = tonumber(redis.call('HINCRBYFLOAT', KEYS[1], 'reserved', ARGV[3]))
  redis.call('HSETNX', KEYS[1], 'spent', '0')
  redis.call('HINCRBYFLOAT', KEYS[2], ARGV[4], ARGV[3])
end
return {tostring(ok), tostring(sent), string.format('%.17g', spent), string.format('%.17g', reserved)}
"""
# KEYS[1] ledger, KEYS[2] its holders; ARGV reserved, spent, holder, tokens
_SETTLE = """
local r = tonumber(redis.call('HGET', KEYS[1], 'reserved') or '0') - tonumber(ARGV[1])
if r < 0 then r = 0 end
redis.call('HSET', KEYS[1], 'reserved', string.format('%.17g', r))
redis.call('HINCRBYFLOAT', KEYS[1], 'spent', ARGV[2])
redis.call('HINCRBY', KEYS[1], 'tokens', ARGV[4])
local h = tonumber(redis.call('HINCRBYFLOAT', KEYS[2], ARGV[3], -tonumber(ARGV[1])))
if h <= 1e-12 then redis.call('HDEL', KEYS[2], ARGV[3]) end
return 1
"""
# KEYS[1] ledger, KEYS[2] its holders; ARGV holder. Returns the dollars released.
_RELEASE = """
local h = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
redis.call('HDEL', KEYS[2], ARGV[1])
local r = tonumber(redis.call('HGET', KEYS[1], 'reserved') or '0') - h
if r < 0 then r = 0 end
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HSET', KEYS[1], 'reserved', string.format('%.17g', r))
end
return string.format('%.17g', h)
"""
# KEYS[1] bucket; ARGV per-second rate, capacity, amount. Returns the seconds to wait.
_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local rate, cap, amount = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local tokens = tonumber(redis.call('HGET', KEYS[1], 'tokens') or ARGV[2])
local updated = tonumber(redis.call('HGET', KEYS[1], 'updated') or now)
local elapsed = now - updated
if elapsed < 0 then elapsed = 0 end
tokens = math.min(cap, tokens + elapsed * rate) - amount
redis.call('HSET', KEYS[1], 'tokens', string.format('%.6f', tokens), 'updated',
           string.format('%.6f', now))
redis.call('EXPIRE', KEYS[1], 86400)
if tokens >= 0 then return '0' end
return string.format('%.6f', -tokens / rate)
"""


def _ledger(name: str) -> list[str]:
    """The keys of a ledger: its totals and what each holder reserved."""
    return [PREFIX + "ledger:" + name, PREFIX + "holds:" + name]


class RedisStore:
    """The store interface (``store.base``) on a Redis server.

    Args:
        url: ``redis://[user:password@]host:port/db`` (``rediss://`` for TLS).
        spill: a local SQLite file for values a failed write could not deliver (None: none).
        timeout_s: socket timeout of one command.
    """

    server = True

    def __init__(self, url: str, spill: str | Path | None = None, timeout_s: float = 10.0) -> None:
        import redis
        from redis.backoff import ExponentialBackoff
        from redis.retry import Retry

        self.url = url
        self.spill = Path(spill) if spill is not None else None
        try:
            self._r = redis.Redis.from_url(
                url,
                socket_timeout=timeout_s,
                socket_connect_timeout=min(5.0, timeout_s),
                retry=Retry(ExponentialBackoff(cap=1.0, base=0.1), 3),
                retry_on_error=[redis.ConnectionError, redis.TimeoutError],
                health_check_interval=30,
            )
        except ValueError as exc:
            raise ConfigError(f"store={url}: {exc} (expected redis://host:port/db)") from None
        self._reserve = self._r.register_script(_RESERVE)
        self._settle = self._r.register_script(_SETTLE)
        self._release = self._r.register_script(_RELEASE)
        self._take = self._r.register_script(_TAKE)
        with self._guard():
            self._r.ping()
        self._flush_spill()

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        """Turn a lost connection into ``StoreLost`` (one line: the store and the cause)."""
        import redis

        try:
            yield
        except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError) as exc:
            raise StoreLost(f"store {self.url} unreachable ({exc})") from None

    def check_persistence(self) -> str | None:
        """A warning when the server keeps nothing on disk (no AOF, no RDB snapshots)."""
        with self._guard():
            info = self._r.info("persistence")
        if info.get("aof_enabled") in (1, "1"):
            return None
        return (
            f"store {self.url}: the server runs without appendonly (AOF): a restart loses the "
            "caches and the sweep's ledger; start it with --appendonly yes"
        )

    # -- values --------------------------------------------------------------------------------

    def get_many(self, namespace: str, keys: Sequence[str]) -> dict[str, JSONValue]:
        keys = list(dict.fromkeys(keys))
        found: dict[str, JSONValue] = {}
        name = PREFIX + "kv:" + namespace
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            with self._guard():
                values = self._r.hmget(name, chunk)
            found.update(
                (k, json.loads(v)) for k, v in zip(chunk, values, strict=True) if v is not None
            )
        return found

    def put_many(self, namespace: str, values: Mapping[str, object]) -> None:
        rows = {k: dumps(v) for k, v in values.items()}
        if not rows:
            return
        try:
            self._put_rows(namespace, rows)
        except StoreLost:
            if self.spill is not None:  # nothing paid for is lost: the next connection sends it
                with self._spill_lock():
                    spilled = SqliteStore(self.spill)
                    try:
                        spilled.put_many(namespace, values)
                    finally:
                        spilled.close()
            raise

    def _put_rows(self, namespace: str, rows: Mapping[str, str]) -> None:
        items = list(rows.items())
        with self._guard():
            pipe = self._r.pipeline(transaction=False)
            for start in range(0, len(items), _CHUNK):
                pipe.hset(PREFIX + "kv:" + namespace, mapping=dict(items[start : start + _CHUNK]))
            pipe.sadd(PREFIX + "namespaces", namespace)
            pipe.execute()

    def _spill_lock(self) -> Any:
        """One process at a time writes or flushes the spill file: the jobs of a sweep resumed
        together each flush at connect, and one must not delete the file another has open
        (SQLite then fails with "disk I/O error"). The lock file itself is never deleted."""
        from filelock import FileLock

        return FileLock(f"{self.spill}.flush.lock")

    def _flush_spill(self) -> None:
        """Send what an earlier job could not write, then remove the spill file."""
        if self.spill is None or not self.spill.is_file():
            return
        with self._spill_lock():
            if not self.spill.is_file():  # another job of the sweep flushed it meanwhile
                return
            spilled = SqliteStore(self.spill)
            try:
                for namespace in spilled.namespaces():
                    self._put_rows(namespace, {k: dumps(v) for k, v in spilled.scan(namespace)})
            finally:
                spilled.close()
            for suffix in ("", "-wal", "-shm", ".lock"):
                Path(f"{self.spill}{suffix}").unlink(missing_ok=True)

    def scan(self, namespace: str) -> Iterator[tuple[str, JSONValue]]:
        with self._guard():
            for key, value in self._r.hscan_iter(PREFIX + "kv:" + namespace, count=_CHUNK):
                yield (key.decode() if isinstance(key, bytes) else str(key)), json.loads(value)

    def count(self, namespace: str) -> int:
        with self._guard():
            return int(self._r.hlen(PREFIX + "kv:" + namespace))

    def namespaces(self) -> list[str]:
        with self._guard():
            members = self._r.smembers(PREFIX + "namespaces")
        return sorted(n.decode() if isinstance(n, bytes) else str(n) for n in members)

    # -- the ledger ----------------------------------------------------------------------------

    def reserve(
        self,
        ledger: str,
        usd: float,
        max_calls: int | None,
        max_usd: float | None,
        holder: str = "",
    ) -> tuple[bool, Totals]:
        args = [-1 if max_calls is None else max_calls, -1 if max_usd is None else max_usd, usd]
        with self._guard():
            ok, sent, spent, reserved = self._reserve(keys=_ledger(ledger), args=[*args, holder])
        return ok == b"1", Totals(int(sent), float(spent), float(reserved))

    def settle(
        self, ledger: str, reserved: float, spent: float, holder: str = "", tokens: int = 0
    ) -> None:
        with self._guard():
            self._settle(keys=_ledger(ledger), args=[reserved, spent, holder, int(tokens)])

    def totals(self, ledger: str) -> Totals:
        with self._guard():
            row = self._r.hgetall(PREFIX + "ledger:" + ledger)
        return Totals(
            int(row.get(b"sent", 0)),
            float(row.get(b"spent", 0.0)),
            max(0.0, float(row.get(b"reserved", 0.0))),
            int(row.get(b"tokens", 0)),
        )

    def holders(self, ledger: str) -> dict[str, float]:
        with self._guard():
            rows = self._r.hgetall(_ledger(ledger)[1])
        return {
            k.decode() if isinstance(k, bytes) else str(k): float(v)
            for k, v in sorted(rows.items())
            if float(v) > 1e-12
        }

    def release(self, ledger: str, holder: str) -> float:
        with self._guard():
            return float(self._release(keys=_ledger(ledger), args=[holder]))

    # -- rate buckets --------------------------------------------------------------------------

    def take(self, bucket: str, amount: float, per_minute: float, capacity: float) -> float:
        with self._guard():
            wait = self._take(
                keys=[PREFIX + "bucket:" + bucket], args=[per_minute / 60.0, capacity, amount]
            )
        return float(wait)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._r.close()

    def __repr__(self) -> str:
        return f"RedisStore({self.url!r})"
