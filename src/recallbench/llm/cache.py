"""SQLite cache of LLM replies, shared safely by parallel processes (Hydra multirun jobs).

The key is the sha256 of a canonical JSON of everything that decides a reply: backend, model,
the endpoint that answers (or a ``cache_scope`` name, ``recallbench.llm.client``), the full chat
messages and every decoding parameter (max_tokens, temperature, seed, the structured-output
constraint). For the extractive backend the "model" is recallbench's own code, so its key also
carries a fingerprint of the package's files (``source_fingerprint``) and the configuration
bound into the task's offline implementation (``offline_config_key``: the arguments of a
``functools.partial``, e.g. an offline rule's thresholds), so a sweep over offline settings
never reuses another setting's replies; replies that depend on files outside the package (e.g. a
model retrained into results/) are not covered: delete the cache after such a change. Values are
JSON (no pickle): the reply text, its token counts and what it cost when it was made. The
values go through the one cache layer (``recallbench.store.values``): the file's table
``replies(key, value, created)`` is kept as the first runs wrote it; WAL with a busy timeout, so
several processes read and write one file, created under a file lock; identical keys hold
identical values, so a race between two writers of the same key is harmless.

With a server store (``store=redis://...``, ``recallbench.store``) the same keys and values live
in the store's namespace ``NAMESPACE`` instead of the file, so a reply one job paid for is a hit
for every job of the sweep, on every machine.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from recallbench.io import not_reads
from recallbench.store import JSONValue, Store, server_store
from recallbench.store.values import (
    Layout,
    Row,
    Table,
    Values,
    cache_values,
    dumps,
    json_column,
    json_value,
)

NAMESPACE = "llm"  # the replies' namespace in a server store (and in `recallbench cache export`)


@functools.lru_cache(maxsize=1)
def source_fingerprint() -> str:
    """Return a short sha256 of every file of the installed recallbench package (code + data).

    The extractive backend's replies come from code, so its cache key carries this: editing an
    offline implementation (or a packaged resource) invalidates its cached replies.
    """
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    with not_reads():  # a fingerprint, not an input of the run (``run.sources``)
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _describe(value: Any) -> Any:
    """JSON stand-in for a bound argument that is not plain data: its type and its name."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return value.tolist()
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    kind = type(value)
    ident = getattr(value, "name", None) or getattr(value, "model", None)
    return {"type": f"{kind.__module__}.{kind.__qualname__}", "name": str(ident)}


def offline_config_key(fn: object) -> str:
    """Canonical JSON of an offline implementation: its function and every argument bound by
    (nested) ``functools.partial``. Objects that are not plain data (an embedder) stand as
    their type and ``name``/``model``; a bound method stands as its qualified name only."""
    bound = []
    while isinstance(fn, functools.partial):
        bound.append({"args": list(fn.args), "keywords": dict(fn.keywords)})
        fn = fn.func
    name = f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', type(fn).__qualname__)}"
    payload = {"fn": name, "bound": bound}
    return json.dumps(payload, sort_keys=True, ensure_ascii=False, default=_describe)


def cache_key(
    backend: str, model: str, messages: list[dict[str, str]], params: Mapping[str, object]
) -> str:
    """Return the sha256 hex key of one call (canonical JSON, sorted keys)."""
    payload = {"backend": backend, "model": model, "messages": messages, "params": params}
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CachedReply(TypedDict):
    """A cached reply: its text, token counts and the model that wrote it (older caches lack it)."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    model: NotRequired[str]


def cached_reply(value: JSONValue, where: str) -> CachedReply:
    """The reply of a stored value; a value of another shape is an error naming ``where``."""
    if isinstance(value, dict):
        text, prompt, done = (value.get(k) for k in ("text", "prompt_tokens", "completion_tokens"))
        if isinstance(text, str) and isinstance(prompt, int) and isinstance(done, int):
            reply = CachedReply(text=text, prompt_tokens=prompt, completion_tokens=done)
            if isinstance(model := value.get("model"), str):
                reply["model"] = model
            return reply
    raise ValueError(
        f"{where}: corrupt cached reply: expected text, prompt_tokens and completion_tokens, "
        f"got {value!r:.120}"
    )


def open_cache(path: str | Path) -> Cache:
    """The reply cache of a run: the process's server store when there is one, else ``path``."""
    return Cache(path, store=server_store())


def _reply_row(value: JSONValue) -> Row:
    return dumps(value), time.time()


# How a reply is kept (``store.values``): the file's one table, as every run since the first
# wrote it; on a server the JSON value itself.
REPLIES: Table[JSONValue] = Table(
    "replies", NAMESPACE, ("value",), _reply_row, json_column, json_value, json_value
)
LAYOUT = Layout(
    "LLM cache",
    """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    created REAL NOT NULL
);
""",
    (REPLIES,),
)


class Cache:
    """A key -> JSON value store in one SQLite file, or in a server store's namespace
    (``store.values``: the one cache layer).

    Args:
        path: the database file; its folder is created. ``":memory:"`` for a private cache.
        busy_timeout_s: how long a writer waits for another process's lock before failing.
        store: a server store (``recallbench.store``): the values live there, ``path`` is unused.
    """

    def __init__(
        self, path: str | Path, busy_timeout_s: float = 60.0, store: Store | None = None
    ) -> None:
        self.store = store
        self.values: Values = cache_values(path, store, LAYOUT, busy_timeout_s)
        self.path = self.values.url

    def get(self, key: str) -> JSONValue:
        """Return the stored value of ``key``, or None when absent (``cached_reply`` reads a
        reply out of it)."""
        return self.values.get_one(REPLIES, NAMESPACE, key)

    def put(self, key: str, value: Mapping[str, JSONValue]) -> None:
        """Store ``value`` (JSON, no NaN) under ``key``."""
        self.values.put(REPLIES, NAMESPACE, {key: dict(value)})

    def put_many(self, values: Mapping[str, JSONValue]) -> None:
        """Store many ``key -> value`` rows in one transaction."""
        self.values.put(REPLIES, NAMESPACE, values)

    def __bool__(self) -> bool:
        return True  # a cache is there even when empty (``__len__`` may ask a server)

    def __len__(self) -> int:
        return self.values.count(NAMESPACE)

    def items(self) -> Iterator[tuple[str, JSONValue]]:
        """Every (key, value) (``recallbench cache export``)."""
        return self.values.scan(NAMESPACE)

    def close(self) -> None:
        """Close the file (a server store stays open: the run closes it)."""
        self.values.close()

    def __repr__(self) -> str:
        return f"Cache({self.path!r})"
