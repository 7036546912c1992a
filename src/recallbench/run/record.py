"""What a run folder records about its own life: attempts, usage over attempts, health, stops.

A run may take several attempts (a crash, ``kill -9``, SIGTERM from SLURM, Ctrl-C, then
``resume_dir=``). Each attempt writes its own usage after every finished episode and at its end
(``run.read.write_usage``); the run's usage is the sum over all attempts (``add_usage``), so
calls, tokens and cost add up over the whole run (an attempt killed with ``-9`` loses only the
usage of its unfinished episode, whose calls are in the LLM cache and come back as cached calls
at no cost).

``run.json`` carries ``pid``, ``host`` and ``heartbeat_unix`` (refreshed after every episode):
``is_stale`` recognises a ``running`` record whose process is gone. Statuses:

- ``finished``: every episode ran and was scored, and the health check passed;
- ``degraded``: finished, but a task's parse failures (or transport failures) passed their
  threshold (``health`` in the config); ``run.json["health"]`` names the tasks and
  ``usage.json["unparsed_samples"]`` keeps a few replies for inspection. Tables flag such cells;
- ``interrupted``: stopped by SIGTERM/SIGINT, with the counts done; resumable;
- ``failed``: an error; the message is in ``run.json["error"]``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import signal
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, TypedDict

from recallbench.verdict import JSONValue

USABLE = ("finished", "degraded")  # statuses whose results tables may use
STALE_AFTER_S = 6 * 3600  # a heartbeat older than this on another host counts as stale


class RunInterrupted(BaseException):
    """A stop signal reached the run (SIGTERM, SIGINT). Not an ``Exception``: nothing swallows it."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"interrupted by {signal.Signals(signum).name}")

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_status(self) -> int:
        """The shell's convention: 128 + signal number (130 for SIGINT, 143 for SIGTERM)."""
        return 128 + self.signum


@contextlib.contextmanager
def stop_signals_raise() -> Iterator[None]:
    """Within the block, SIGTERM and SIGINT raise ``RunInterrupted`` in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, _frame: Any) -> NoReturn:
        raise RunInterrupted(signum)

    previous = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


# ----------------------------------------------------------------------------- identity

# Keys of the resolved config that do not change a run's results (where files go, how it is
# shown, when it is called unhealthy, how it is named, how fast the endpoint is driven);
# everything else is the run's identity. A resume may change these (e.g. lower
# generator.concurrency after rate limits, or point at a moved data folder: the dataset's
# sha256 is checked separately).
NOT_IDENTITY = (
    "resume_dir",
    "stamp",
    "store",
    "sweep",
    "progress",
    "workers",
    "wandb",
    "paths",
    "tag",
    "job",
    "choices",
    "overrides",
    "health",
    "reproduce",  # how make drives an experiment (cli/reproduce.py), not what a run computes
    "dataset.data_dir",
    "generator.concurrency",
    "generator.rpm",
    "generator.tpm",
    "generator.timeout_s",
    "generator.max_retries",
    "generator.api_key_env",
    "generator.max_usd",  # the budget: a resume may raise it
    "generator.max_calls",
)
# Keys, at any depth, whose value says where a cache lives (resolved under paths.results_dir or
# paths.cache_dir: a judge's reply cache, LUFY's fitted arousal regressors, TeaFarm's question
# file and reply cache): where the results folder sits is no part of what a run computes, so a
# moved results folder or a second checkout still matches its runs (issue 53).
CACHE_LOCATIONS = frozenset({"cache_path", "arousal_cache_dir", "teabag_file"})
# The rule a run.json's ``config_hash`` was computed under (``config_hash_version``; absent: 1).
# 1: cache locations were identity; 2: they are not. ``run.resume.recorded_hash`` migrates.
CONFIG_HASH_VERSION = 2


def identity(config: Mapping[str, object], version: int = CONFIG_HASH_VERSION) -> dict[str, object]:
    """The part of a resolved config that decides a run's results (under the rule ``version``)."""
    out = {k: v for k, v in config.items() if k not in NOT_IDENTITY}
    for dotted in (k for k in NOT_IDENTITY if "." in k):
        group, key = dotted.split(".", 1)
        if isinstance(part := out.get(group), Mapping) and key in part:
            out[group] = {k: v for k, v in part.items() if k != key}
    return out if version < 2 else _without_locations(out)


def _without_locations(node: Mapping[str, object]) -> dict[str, object]:
    return {
        k: _without_locations(v) if isinstance(v, Mapping) else v
        for k, v in node.items()
        if k not in CACHE_LOCATIONS
    }


def config_hash(config: Mapping[str, object], version: int = CONFIG_HASH_VERSION) -> str:
    """sha256 (16 hex) of the canonical JSON of ``identity(config, version)``."""
    ident = identity(config, version)
    text = json.dumps(ident, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _flat(node: object, prefix: str = "") -> dict[str, object]:
    if isinstance(node, Mapping):
        out: dict[str, object] = {}
        for k, v in node.items():
            out.update(_flat(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: node}


def config_diff(old: Mapping[str, object], new: Mapping[str, object], limit: int = 4) -> str:
    """``memory.k: 2 -> 6; seed: 0 -> 1`` over the identity keys (at most ``limit`` shown)."""
    a, b = _flat(identity(old)), _flat(identity(new))
    keys = sorted(k for k in set(a) | set(b) if a.get(k, "<absent>") != b.get(k, "<absent>"))
    shown = [f"{k}: {a.get(k, '<absent>')!r} -> {b.get(k, '<absent>')!r}" for k in keys[:limit]]
    more = f" (+{len(keys) - limit} more)" if len(keys) > limit else ""
    return "; ".join(shown) + more


# ----------------------------------------------------------------------------- usage sums


def add_usage(a: Mapping[str, JSONValue], b: Mapping[str, JSONValue]) -> dict[str, JSONValue]:
    """Add two usage dicts leaf by leaf (numbers add; a cost that is None on either side stays
    None: unknown is never silently 0; lists of samples are concatenated, 3 per task kept)."""
    out: dict[str, JSONValue] = {}
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key), b.get(key)
        if key not in a or key not in b:
            out[key] = x if key in a else y
        elif isinstance(x, Mapping) and isinstance(y, Mapping):
            out[key] = add_usage(x, y)
        elif isinstance(x, list) and isinstance(y, list):
            out[key] = (x + y)[:3]
        elif x is None or y is None:
            out[key] = None
        elif isinstance(x, bool | str) or isinstance(y, bool | str):
            out[key] = y
        elif isinstance(x, int | float) and isinstance(y, int | float):
            total = x + y
            out[key] = round(total, 8) if isinstance(total, float) else total
        else:
            raise TypeError(f"usage {key!r}: cannot add {x!r} and {y!r}")
    return out


# ----------------------------------------------------------------------------- health


@dataclass(frozen=True)
class HealthPolicy:
    """When a finished run counts as ``degraded`` (rates per task, over this run's calls)."""

    max_parse_failure_rate: float = 0.05
    max_failure_rate: float = 0.02
    breaker_after: int = 5  # failed calls in a row that stop a run (``llm.CircuitBreaker``)

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any] | None) -> HealthPolicy:
        return cls(**dict(cfg or {}))


class Problem(TypedDict):
    """An unhealthy task (``health_problems``): its failures of one kind among its calls."""

    task: str
    kind: str  # "parse_failures" or "failures"
    n: int
    calls: int
    rate: float


def health_problems(usage: Mapping[str, object], policy: HealthPolicy) -> list[Problem]:
    """Return one entry per task whose parse or transport failure rate passes the policy.

    Rates are per task call; repair turns (``generator.repairs``) are extra calls of the same
    task, so they are not in the denominator."""
    problems: list[Problem] = []
    for task, value in sorted(_mapping(usage.get("tasks") or {}, "tasks").items()):
        bucket = _mapping(value, f"tasks.{task}")
        calls = _count(bucket, "calls") - _count(bucket, "repairs")
        if not calls:
            continue
        for kind, limit in (
            ("parse_failures", policy.max_parse_failure_rate),
            ("failures", policy.max_failure_rate),
        ):
            n = _count(bucket, kind)
            if n and n / calls > limit:
                problems.append(
                    {"task": task, "kind": kind, "n": n, "calls": calls, "rate": n / calls}
                )
    return problems


def _mapping(value: object, where: str) -> Mapping[str, JSONValue]:
    if not isinstance(value, Mapping):
        raise TypeError(f"usage {where}: expected an object, got {value!r:.80}")
    return value


def _count(bucket: Mapping[str, JSONValue], key: str) -> int:
    value = bucket.get(key) or 0
    if not isinstance(value, int | float | str):
        raise TypeError(f"usage {key}: expected a count, got {value!r:.80}")
    return int(value)


def describe_problems(problems: Sequence[Mapping[str, object]]) -> str:
    """One line naming each unhealthy task, e.g. ``theanine.link_relation: 69/69 parse failures``."""
    return "; ".join(
        f"{p['task']}: {p['n']}/{p['calls']} {str(p['kind']).replace('_', ' ')}" for p in problems
    )


# ----------------------------------------------------------------------------- liveness


def process_alive(pid: int) -> bool:
    """Is a process with this pid running on this host?"""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_stale(info: Mapping[str, object], now: float | None = None) -> bool:
    """Is a ``running`` record left behind by a process that is gone?

    On the same host the pid decides; elsewhere a heartbeat older than ``STALE_AFTER_S``.
    """
    if info.get("status") != "running":
        return False
    pid, host = info.get("pid"), info.get("host")
    if isinstance(pid, int | str) and host == platform.node():
        return not process_alive(int(pid))
    beat = info.get("heartbeat_unix") or info.get("started_unix")
    now = time.time() if now is None else now
    return not isinstance(beat, int | float | str) or now - float(beat) > STALE_AFTER_S
