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
round-trips a float64 exactly), read back checked. Kept through ``store.values`` (namespace
``metric-results``, naming ``metric`` and ``identity`` too; the file's ``results`` table as ever).
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
from typing import TYPE_CHECKING, cast

import numpy as np

from recallbench.store import JSONValue, Store, process_cache
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


def _array(stats: np.ndarray) -> dict[str, JSONValue]:
    """An array as JSON, dtype and shape kept; mostly zeros (MAUVE's bucket counts): non-zeros."""
    head: dict[str, JSONValue] = {"dtype": str(stats.dtype), "shape": list(stats.shape)}
    flat = stats.reshape(-1)
    nonzero = np.flatnonzero(flat)
    if len(nonzero) * 4 < flat.size:
        return {**head, "at": nonzero.tolist(), "values": flat[nonzero].tolist()}
    return {**head, "data": stats.tolist()}


def _from_array(stats: dict[str, JSONValue]) -> np.ndarray:  # what _array wrote, else an error
    dtype, shape = stats.get("dtype"), stats.get("shape")
    dims = tuple(n for n in shape if isinstance(n, int)) if isinstance(shape, list) else ()
    if not isinstance(dtype, str) or not isinstance(shape, list) or len(dims) != len(shape):
        raise ValueError(f"corrupt stats: expected dtype and shape, got {stats!r:.80}")
    if "data" in stats:
        return np.asarray(stats["data"], dtype=dtype).reshape(dims)
    flat = np.zeros(int(np.prod(dims)), dtype=dtype)
    flat[np.asarray(stats.get("at"), dtype=np.int64)] = stats.get("values")
    return flat.reshape(dims)


def _dump(result: MetricResult) -> dict[str, JSONValue]:  # stats: an array as _array, a list
    stats = result.stats
    return {
        "value": result.value,
        "items": None if result.items is None else list[JSONValue](result.items),
        "meta": dict(result.meta),
        "stats": _array(stats)
        if isinstance(stats, np.ndarray)
        else None
        if stats is None
        else [list[JSONValue](row) for row in stats],
        "estimator": None if result.estimator is None else dict[str, JSONValue](result.estimator),
    }


def _floats(value: object) -> list[float] | None:  # a JSON list of numbers (None: not one)
    if isinstance(value, list) and {type(v) for v in value} <= {int, float}:
        return cast("list[float]", value)  # checked: ints and floats only (no copy: a cache hit)
    return None


def _load(row: JSONValue) -> MetricResult:
    """The result ``_dump`` wrote; a stored value of another shape is an error."""
    from recallbench.metrics.base import MetricResult

    if not isinstance(row, dict) or not isinstance(row.get("meta"), dict):
        raise ValueError(f"corrupt metric result: expected value and meta, got {row!r:.80}")
    value, meta, items, stats, spec = (
        row.get(k) for k in ("value", "meta", "items", "stats", "estimator")
    )
    floats = None if items is None else _floats(items)
    estimator: dict[str, str | int | float | None] | None = None
    if isinstance(spec, dict):  # its values: numbers, strings or null only
        estimator = {k: v for k, v in spec.items() if isinstance(v, str | int | float) or v is None}
    if (
        not isinstance(value, int | float)
        or not isinstance(meta, dict)
        or (items is not None and floats is None)
        or (spec is not None and (not isinstance(spec, dict) or len(spec) != len(estimator or {})))
    ):
        raise ValueError(f"corrupt metric result: value, items or estimator, got {row!r:.80}")
    if isinstance(stats, dict):
        array: np.ndarray | list[list[float]] | None = _from_array(stats)
    elif isinstance(stats, list):
        rows = [_floats(r) for r in stats]
        array = [r for r in rows if r is not None]
        if len(array) != len(stats):
            raise ValueError(f"corrupt metric result: stats, got {stats!r:.80}")
    elif stats is None:
        array = None
    else:
        raise ValueError(f"corrupt metric result: stats, got {stats!r:.80}")
    return MetricResult(float(value), floats, meta, array, estimator)


NAMESPACE = "metric-results"  # the results' namespace (its values: the result's JSON)
ABOUT = ("metric", "identity")  # kept beside a result for people reading the file


def _result_row(value: JSONValue) -> Row:
    """The ``(metric, identity, result, created)`` columns of a value (``MetricCache.put``); a
    server's value from before results named their metric exports with ``?`` and ``null``."""
    if not isinstance(value, dict) or "value" not in value:
        raise ValueError(f"expected a metric result's JSON, got {value!r:.80}")
    result = {k: v for k, v in value.items() if k not in ABOUT}
    return str(value.get("metric", "?")), dumps(value.get("identity")), dumps(result), time.time()


# How a result is kept (``store.values``): the file's one table, as every run since the first
# wrote it; on a server the result's JSON with its metric and identity.
RESULTS: Table[JSONValue] = Table(
    "results", NAMESPACE, ("result",), _result_row, json_column, json_value, json_value
)
LAYOUT = Layout(
    "metric result cache",
    """
CREATE TABLE IF NOT EXISTS results (
    key TEXT PRIMARY KEY,
    metric TEXT NOT NULL,
    identity TEXT NOT NULL,
    result TEXT NOT NULL,
    created REAL NOT NULL
);
""",
    (RESULTS,),
)


class MetricCache:
    """A persistent ``key -> MetricResult`` store in one SQLite file (``":memory:"``: private),
    or, with a server store (``store=redis://...``), in its namespace :data:`NAMESPACE`, so
    every job of a sweep on any machine reads what another scored (``store.values``: the one
    cache layer)."""

    def __init__(self, path: str | Path, store: Store | None = None) -> None:
        self.store = store
        self.values: Values = cache_values(path, store, LAYOUT)
        self.path = self.values.url

    def get(self, key: str) -> MetricResult | None:
        """The stored result of ``key`` (None: not stored)."""
        got = self.values.get_one(RESULTS, NAMESPACE, key)
        try:
            return None if got is None else _load(got)
        except ValueError as exc:
            raise ValueError(f"{self.path} {NAMESPACE} {key}: {exc}") from None

    def put(self, key: str, metric: str, ident: dict[str, object], result: MetricResult) -> None:
        """Store ``result`` under ``key`` with its metric and identity (for people reading)."""
        about: JSONValue = json.loads(dumps(ident))  # the identity as JSON (a TypeError here)
        value: JSONValue = {**_dump(result), "metric": metric, "identity": about}
        self.values.put(RESULTS, NAMESPACE, {key: value})

    def __len__(self) -> int:
        return self.values.count(NAMESPACE)

    def close(self) -> None:
        """Close the database file (a server store is closed by its owner)."""
        self.values.close()


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
