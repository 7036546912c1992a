"""The files of a run folder and their parsers: one line reader, one snapshot parser, usage.

This module is the one place of ``src/`` that spells a run folder's file names; the writer
(``_write``) and the reader (``_record``) take them from here. Every parser names the file (and
the line) of a record it cannot read; an absent file is the caller's to handle (``RunRecord``
says which files a folder lacks).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, TypeVar, cast

from recallbench.errors import DatasetFormatError
from recallbench.metrics.summary import Summary
from recallbench.records import MemoryItem, Prediction
from recallbench.run.read._log import RunLog
from recallbench.run.record import add_usage
from recallbench.verdict import JSONValue

T = TypeVar("T")

CONFIG_FILE = "config.yaml"  # the resolved config (runner: write_yaml)
RUN_FILE = "run.json"  # status and provenance (run.record)
PREDICTIONS_FILE = "predictions.jsonl"  # every prediction, written once all are scored
SCORES_FILE = "scores.jsonl"  # per-item metric values
SUMMARY_FILE = "summary.json"  # per metric: value, n, interval (metrics.summary.Summary)
USAGE_FILE = "usage.json"  # LLM usage summed over the attempts (summed_usage)
USAGE_DIR = "usage"  # usage/attempt-<n>.json: each attempt's own usage
ITEMS_DIR = "items"  # items/<episode>.jsonl: each finished episode's predictions
MEMORY_DIR = "memory"  # memory/<episode>.jsonl: the store after every session
EPISODES_DIR = "episodes"  # episodes/<episode>.json: the episode as replayed


class RunSummary(Summary, total=False):
    """A run's ``summary.json``: its protocol's ``Summary`` (with the protocol's own keys, typed
    by the protocol: ``protocols.base.JudgedSummary``...) and what the runner adds."""

    n_episodes: int
    n_predictions: int
    memory: dict[str, JSONValue]  # ``metrics.activity``: totals, per_session, method


class Snapshot(NamedTuple):
    """The memory store after one session of an episode (a row of ``memory/<episode>.jsonl``)."""

    after_session: int
    items: tuple[MemoryItem, ...]


def json_object(path: Path) -> dict[str, object]:
    """Read a JSON object; a file that is not one raises ``DatasetFormatError`` naming it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise DatasetFormatError(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise DatasetFormatError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def is_run_folder(folder: Path) -> bool:
    """Does ``folder`` hold a run (its ``run.json``)?"""
    return (folder / RUN_FILE).is_file()


def read_log(folder: Path) -> RunLog:
    """A run folder's ``run.json`` as a ``RunLog`` (any version: ``RunLog.from_dict``).

    ``FileNotFoundError`` when absent; ``DatasetFormatError`` naming the file when unreadable."""
    path = folder / RUN_FILE
    return RunLog.from_dict(json_object(path), path)


def read_summary(folder: Path) -> RunSummary:
    """A run folder's ``summary.json``; one that is not a JSON object with a ``metrics`` object
    raises ``DatasetFormatError`` naming it (a missing file raises ``FileNotFoundError``)."""
    path = folder / SUMMARY_FILE
    data = json_object(path)
    if not isinstance(data.get("metrics"), dict):
        raise DatasetFormatError(
            f"{path}: expected a JSON object with a 'metrics' object, got {sorted(data)}"
        )
    return cast(RunSummary, data)  # checked above: the file is the edge


def attempt_path(folder: Path, attempt: int) -> Path:
    """Where attempt ``attempt`` of a run keeps its own usage."""
    return folder / USAGE_DIR / f"attempt-{attempt}.json"


def attempt_files(folder: Path) -> list[Path]:
    """The per-attempt usage files of a run folder, in attempt order."""
    files = (folder / USAGE_DIR).glob("attempt-*.json")
    return sorted(files, key=lambda p: int(p.stem.split("-")[1]))


def summed_usage(folder: Path) -> dict[str, JSONValue]:
    """Sum every attempt's usage (``run.record.add_usage``); ``attempts`` lists each attempt's
    totals. What ``usage.json`` holds."""
    total: dict[str, JSONValue] = {}
    attempts: list[JSONValue] = []
    for path in attempt_files(folder):
        usage = cast("dict[str, JSONValue]", json_object(path))  # json.loads output: JSON
        totals = usage.get("totals")
        counts = totals if isinstance(totals, dict) else {}
        attempts.append({"attempt": int(path.stem.split("-")[1]), **counts})
        total = add_usage(total, usage) if total else dict(usage)
    total["attempts"] = attempts
    return total


def json_lines(path: Path, parse: Callable[[dict[str, object]], T]) -> list[T]:
    """Parse every non-blank line of a JSONL file; a bad line is an error naming file and line."""
    out = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                if not isinstance(row, dict):
                    raise TypeError(f"expected a JSON object, got {type(row).__name__}")
                out.append(parse(row))
            except (ValueError, KeyError, TypeError) as exc:
                raise DatasetFormatError(
                    f"{path} line {number}: not a record this file should hold ({exc!r})"
                ) from exc
    return out


def _item(value: object) -> MemoryItem:
    """A stored item; ``item_id``, ``text`` and ``kind`` read as "" when absent (the judge
    panel's and CAIM's rescoring readers took such hand-written rows)."""
    d = record(value)
    return MemoryItem.from_dict({"item_id": "", "text": "", "kind": "", **d})


def _snapshot(row: dict[str, object]) -> Snapshot:
    """A store row: ``after_session`` is required; absent or null ``items`` is an empty store
    (``metrics.activity`` read such rows so)."""
    items = row.get("items")
    if items is None:
        items = []
    if "after_session" not in row or not isinstance(items, list):
        raise ValueError(f"expected after_session and an items list (keys: {sorted(row)})")
    session = row["after_session"]
    if not isinstance(session, int | float | str):
        raise TypeError(f"after_session: expected a number, got {session!r}")
    return Snapshot(int(session), tuple(_item(i) for i in items))


def record(value: object) -> dict[str, object]:
    """A JSON object inside a row (a memory item, a prediction); TypeError otherwise."""
    if not isinstance(value, dict):
        raise TypeError(f"expected a JSON object, got {type(value).__name__}")
    return value


def prediction(row: dict[str, object]) -> Prediction:
    """A prediction row; one without ``prompt_hash`` (written by hand, or before predictions
    carried it) reads with an empty one."""
    return Prediction.from_dict({"prompt_hash": "", **row})


def read_snapshots(path: Path) -> tuple[Snapshot, ...]:
    """The stores of one ``memory/<episode>.jsonl``, in file order (``()`` when absent)."""
    return tuple(json_lines(path, _snapshot)) if path.is_file() else ()


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _cost(value: object) -> float | None:
    return None if value is None else _number(value)


@dataclass(frozen=True)
class UsageBucket:
    """One bucket of ``usage.json`` (the totals, a stage or a task); ``raw`` keeps every key."""

    raw: Mapping[str, object] = field(default_factory=dict)

    def count(self, key: str) -> int:
        """An integer count (``calls``, ``prompt_tokens``, ...); 0 when absent."""
        return int(_number(self.raw.get(key)))

    def seconds(self, key: str = "latency_s") -> float:
        """A duration in seconds; 0.0 when absent."""
        return _number(self.raw.get(key))

    @property
    def sent(self) -> int:
        """Requests sent to an endpoint: the calls less those answered from the cache."""
        return self.count("calls") - self.count("cached_calls")

    @property
    def cost_usd(self) -> float | None:
        """The dollars spent (None: unknown, never silently 0)."""
        return _cost(self.raw.get("cost_usd"))

    @property
    def cost_recorded(self) -> float | None:
        """What the calls would have cost without the cache when recorded, else ``cost_usd``."""
        if "cost_usd_without_cache" in self.raw:
            return _cost(self.raw["cost_usd_without_cache"])
        return self.cost_usd


def _buckets(value: object) -> dict[str, UsageBucket]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): UsageBucket(dict(v)) for k, v in value.items() if isinstance(v, Mapping)}


@dataclass(frozen=True)
class RunUsage:
    """A run's ``usage.json``: totals, per stage, per task, and which stage each task is."""

    totals: UsageBucket
    by_stage: Mapping[str, UsageBucket]
    tasks: Mapping[str, UsageBucket]
    task_stages: Mapping[str, str] | None  # None: written before usage.json kept the map
    raw: Mapping[str, object]

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> RunUsage:
        """Build from a ``usage.json`` object (any bucket may be absent)."""
        totals = data.get("totals")
        stages = data.get("task_stages")
        return cls(
            totals=UsageBucket(dict(totals) if isinstance(totals, Mapping) else {}),
            by_stage=_buckets(data.get("by_stage")),
            tasks=_buckets(data.get("tasks")),
            task_stages=(
                {str(k): str(v) for k, v in stages.items()} if isinstance(stages, Mapping) else None
            ),
            raw=dict(data),
        )

    def stage(self, name: str) -> UsageBucket:
        """The bucket of stage ``name`` (empty when the run had none)."""
        return self.by_stage.get(name) or UsageBucket()
