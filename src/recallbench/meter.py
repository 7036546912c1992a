"""Process-wide meters: where a run's time goes, and event counts, for ``usage.json``.

Four activities are timed where they happen: ``lm_scoring`` (causal-LM scores,
``llm.perplexity``), ``embeddings`` (``Embedder.encode``), ``llm_calls`` (``LLM`` calls, the
extractive backend's offline implementations included) and ``metrics`` (the runner's scoring
phase). Time is *exclusive*: an activity nested in another (an embedding inside an offline LLM
task, LM scoring inside the perplexity metric) pauses the outer one, so the seconds of one thread
add up to at most its wall time. Threads keep their own nesting; their seconds add up, so a
thread waiting for a shared model inside a timed block would count another thread's work: MiniLM
times the wait for its lock apart (``embedder_wait``), as it times its load (``embedder_load``).

Counters are named ``<what>.<event>`` (``lm_scores.disk_hits``). The runner takes a
``snapshot`` when a run starts and writes the difference at its end (``delta``), so runs that
share a process (a sequential Hydra multirun) each get their own figures.

    with meter.timed("embeddings"):
        vectors = model.encode(texts)
    meter.count("embeddings.computed", len(texts))
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

ACTIVITIES = ("lm_scoring", "embeddings", "llm_calls", "metrics")

_lock = threading.Lock()
_seconds: dict[str, float] = {}
_counts: dict[str, int] = {}
_local = threading.local()  # per thread: the stack of [activity, started] being timed


def _add_seconds(activity: str, seconds: float) -> None:
    with _lock:
        _seconds[activity] = _seconds.get(activity, 0.0) + seconds


@contextlib.contextmanager
def timed(activity: str) -> Iterator[None]:
    """Time the block as ``activity``; an enclosing activity of this thread is paused meanwhile."""
    stack: list[list[Any]] = _local.__dict__.setdefault("stack", [])
    now = time.perf_counter()
    if stack:
        outer = stack[-1]
        _add_seconds(outer[0], now - outer[1])
    stack.append([activity, now])
    try:
        yield
    finally:
        now = time.perf_counter()
        name, started = stack.pop()
        _add_seconds(name, now - started)
        if stack:
            stack[-1][1] = now  # the outer activity resumes


def count(event: str, n: int = 1) -> None:
    """Add ``n`` to the counter ``event`` (``<what>.<event>``)."""
    if n:
        with _lock:
            _counts[event] = _counts.get(event, 0) + int(n)


Meters = dict[str, dict[str, float]]  # {"seconds": {activity: s}, "counts": {event: n}}


def snapshot() -> Meters:
    """Return the process totals so far: ``{"seconds": {...}, "counts": {...}}``.

    Activities being timed right now count up to this moment.
    """
    now = time.perf_counter()
    with _lock:
        seconds = dict(_seconds)
        counts: dict[str, float] = dict(_counts)
    for name, started in getattr(_local, "stack", []):
        seconds[name] = seconds.get(name, 0.0) + now - started
    return {"seconds": seconds, "counts": counts}


def delta(before: Meters) -> Meters:
    """Return what was metered since ``before`` (a ``snapshot``), every activity listed.

    ``{"seconds": {activity: s}, "<what>": {event: n}}``: counters grouped by their prefix
    (``lm_scores``, ``embeddings``), so ``usage.json`` reads ``compute.lm_scores.disk_hits``.
    """
    now = snapshot()
    old_s, old_c = before.get("seconds", {}), before.get("counts", {})
    names = sorted(set(ACTIVITIES) | set(now["seconds"]))
    out: dict[str, dict[str, float]] = {
        "seconds": {k: round(now["seconds"].get(k, 0.0) - old_s.get(k, 0.0), 6) for k in names}
    }
    for key in sorted(now["counts"]):
        diff = now["counts"][key] - old_c.get(key, 0)
        what, _, event = key.partition(".")
        out.setdefault(what, {})[event or "n"] = int(diff)
    return out
