"""On-disk cache of metric results computed from predictions: (what decides it) -> MetricResult.

MAUVE, BERTScore and perplexity of a run's predictions cost seconds to minutes (a THEANINE
Table 1 job spent 35 of its 39-125 s in them); a resumed run, a rerun whose code changed
elsewhere, the tables that rescore runs recompute them over the same texts. With a cache set
(``use_metric_cache``; ``cli.run`` puts it at ``<paths.cache_dir>/metric_results.sqlite``),
``cached_compute`` looks a result up before computing it.

Key: sha256 of the canonical JSON of the metric's identity (``identity``: its class, registry
name, ``cache_version``, every setting in ``Metric.cache_settings`` such as MAUVE's seed(s) and
buckets or BERTScore's model and layer, the versions of the packages that compute it,
``Metric.cache_packages``, and the sha256 of the source of its code, ``code_modules``: the
modules of its class and base classes, the modules its module imports names from, and
``Metric.cache_modules``, within its own top-level package or recallbench; so an edited metric
misses the cache without anyone raising ``cache_version``) and of the inputs (predictions, references and, for metrics that use
them, contexts). A metric whose settings cannot be named (an injected model object) returns
None from ``cache_settings`` and is never cached. Value: the result's JSON (value, items, meta,
estimator, and ``stats`` as stored: a list as a list, an array with its dtype and shape; JSON
round-trips a float64 exactly). The file is shared like the LM score cache (``io.connect_shared``, WAL).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
import threading
import time
import types
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from recallbench.io import connect_shared, db_file, unusable_cache, write_immediate
from recallbench.records import JSON
from recallbench.store import Store, process_cache

if TYPE_CHECKING:
    from recallbench.metrics.base import Metric, MetricResult, Reference

__all__ = [
    "MetricCache",
    "cached_compute",
    "code_modules",
    "feature_cache_path",
    "identity",
    "result_key",
    "use_metric_cache",
]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    key TEXT PRIMARY KEY,
    metric TEXT NOT NULL,
    identity TEXT NOT NULL,
    result TEXT NOT NULL,
    created REAL NOT NULL
);
"""
_default: list[MetricCache | None] = [None]
_features: list[str | None] = [None]  # the embedding cache file of metrics' own featurizers
_caches: dict[str, MetricCache] = {}
_lock = threading.Lock()


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def code_modules(metric: Metric) -> list[str]:
    """The modules whose source decides ``metric``'s results: those of its class and base
    classes, those its class's module imports names (or modules) from, and
    ``metric.cache_modules``, kept when they belong to recallbench or to the class's own
    top-level package (a plugin metric's code); third-party code is keyed by package version."""
    cls = type(metric)
    names = {c.__module__ for c in cls.__mro__} | set(metric.cache_modules)
    module = sys.modules.get(cls.__module__)
    for value in vars(module).values() if module is not None else ():
        name = value.__name__ if isinstance(value, types.ModuleType) else None
        name = name or getattr(value, "__module__", None)
        if isinstance(name, str):
            names.add(name)
    roots = {"recallbench", cls.__module__.split(".")[0]}
    return sorted(n for n in names if n.split(".")[0] in roots)


_sources: dict[tuple[str, int, int], str] = {}  # (file, mtime_ns, size) -> sha256 of its bytes


def _source_sha(module: str) -> str | None:
    """sha256 of a module's source file as it is on disk now (None: no source file)."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    origin = spec.origin if spec is not None else None
    if not origin or not origin.endswith(".py"):
        return None
    try:
        stat = Path(origin).stat()
        key = (origin, stat.st_mtime_ns, stat.st_size)
        if key not in _sources:
            _sources[key] = hashlib.sha256(Path(origin).read_bytes()).hexdigest()
    except OSError:
        return None
    return _sources[key]


def identity(metric: Metric) -> dict[str, object] | None:
    """What decides ``metric``'s results besides its inputs (None: not cacheable)."""
    settings = metric.cache_settings()
    if settings is None:
        return None
    return {
        "class": f"{type(metric).__module__}.{type(metric).__qualname__}",
        "name": metric.name,
        "version": metric.cache_version,
        "settings": settings,
        "packages": {p: _version(p) for p in metric.cache_packages},
        "code": {m: _source_sha(m) for m in code_modules(metric)},
    }


def result_key(
    ident: dict[str, object],
    predictions: Sequence[str],
    references: Sequence[Reference],
    contexts: Sequence[str | None] | None,
) -> str:
    """sha256 hex of the identity and the inputs (canonical JSON)."""
    refs = [r if isinstance(r, str) else list(r) for r in references]
    blob = json.dumps(
        [ident, list(predictions), refs, None if contexts is None else list(contexts)],
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _array(stats: np.ndarray) -> dict[str, JSON]:
    """An array as JSON: dtype and shape kept; a mostly-zero one (MAUVE's per-item bucket counts
    over 10 seeds: 2 x 10 non-zeros in 20 x buckets columns) as its non-zero entries only."""
    head: dict[str, JSON] = {"dtype": str(stats.dtype), "shape": list(stats.shape)}
    flat = stats.reshape(-1)
    nonzero = np.flatnonzero(flat)
    if len(nonzero) * 4 < flat.size:
        return {**head, "at": nonzero.tolist(), "values": flat[nonzero].tolist()}
    return {**head, "data": stats.tolist()}


def _from_array(stats: dict[str, JSON]) -> np.ndarray:
    if "data" in stats:
        return np.asarray(stats["data"], dtype=stats["dtype"]).reshape(stats["shape"])
    flat = np.zeros(int(np.prod(stats["shape"])), dtype=stats["dtype"])
    flat[np.asarray(stats["at"], dtype=np.int64)] = stats["values"]
    return flat.reshape(stats["shape"])


def _dump(result: MetricResult) -> str:
    stats: JSON = result.stats
    if isinstance(stats, np.ndarray):  # back as the same array: dtype and shape kept
        stats = _array(stats)
    return json.dumps(
        {
            "value": result.value,
            "items": result.items,
            "meta": result.meta,
            "stats": stats,
            "estimator": result.estimator,
        },
        allow_nan=False,
    )


def _load(text: str) -> MetricResult:
    from recallbench.metrics.base import MetricResult

    row = json.loads(text)
    stats = row["stats"]
    if isinstance(stats, dict):
        stats = _from_array(stats)
    return MetricResult(row["value"], row["items"], row["meta"], stats, row["estimator"])


NAMESPACE = "metric-results"  # a server store's namespace (its values: the result's JSON)


class MetricCache:
    """A persistent ``key -> MetricResult`` store in one SQLite file (``":memory:"``: private),
    or, with a server store (``store=redis://...``), in its namespace :data:`NAMESPACE`, so
    every job of a sweep on any machine reads what another scored."""

    def __init__(self, path: str | Path, store: Store | None = None) -> None:
        self.store = store
        self.path = db_file(path, "metric result cache") if store is None else store.url
        self._lock = threading.Lock()
        if store is not None:
            return
        self._conn = connect_shared(self.path, _SCHEMA, "metric result cache")
        with self._lock, unusable_cache(self.path, "metric result cache"):
            self._conn.execute("SELECT COUNT(*) FROM results LIMIT 1").fetchone()

    def get(self, key: str) -> MetricResult | None:
        """The stored result of ``key`` (None: not stored)."""
        if self.store is not None:
            got = self.store.get_many(NAMESPACE, [key]).get(key)
            return None if got is None else _load(json.dumps(got))
        with self._lock:
            row = self._conn.execute("SELECT result FROM results WHERE key = ?", (key,)).fetchone()
        return None if row is None else _load(row[0])

    def put(self, key: str, metric: str, ident: dict[str, object], result: MetricResult) -> None:
        """Store ``result`` under ``key`` (the identity is kept for people reading the file)."""
        if self.store is not None:
            self.store.put_many(NAMESPACE, {key: json.loads(_dump(result))})
            return
        row = (key, metric, json.dumps(ident, sort_keys=True), _dump(result), time.time())
        with self._lock:
            write_immediate(
                self._conn, "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?)", [row]
            )

    def __len__(self) -> int:
        if self.store is not None:
            return self.store.count(NAMESPACE)
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM results").fetchone()[0])

    def close(self) -> None:
        """Close the database connection (a server store is closed by its owner)."""
        if self.store is not None:
            return
        with self._lock:
            self._conn.close()


def use_metric_cache(
    path: str | Path | None, features: str | Path | None = None
) -> MetricCache | None:
    """Make ``path`` this process's metric result cache (None: no cache); return it. With a
    server store (``store=redis://...``) the results live there instead of in ``path``.

    ``features``: the embedding cache file (``embed.cache``) that metrics embedding texts with
    their own default model (MAUVE's MiniLM features) read and write, so a text embedded by a
    run's MiniLM embedder or by another run's metric is not embedded again.
    """
    with _lock:
        _features[0] = None if features is None else str(features)
        cache: MetricCache | None = process_cache(_caches, path, MetricCache)
        _default[0] = cache
    return cache


def feature_cache_path() -> str | None:
    """The embedding cache file set by ``use_metric_cache(..., features=)`` (None: none)."""
    return _features[0]


def cached_compute(
    metric: Metric,
    predictions: Sequence[str],
    references: Sequence[Reference],
    contexts: Sequence[str | None] | None = None,
) -> MetricResult:
    """``metric.compute`` through the process's cache (a lookup when it was computed before)."""
    kwargs = {} if contexts is None else {"contexts": contexts}
    cache = _default[0]
    ident = identity(metric) if cache is not None else None
    if cache is None or ident is None:
        return metric.compute(predictions, references, **kwargs)
    key = result_key(ident, predictions, references, contexts)
    if (found := cache.get(key)) is not None:
        return found
    result = metric.compute(predictions, references, **kwargs)
    cache.put(key, metric.name, ident, result)
    return result
