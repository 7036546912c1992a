"""The run folder's one writer: what the runner writes, under the names of ``_files``.

Every write is atomic (``recallbench.io``: temp file + rename) and JSON has no NaN. The reader
(``read_run``) reads back exactly these files; a format change is one edit here and one there.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from recallbench.io import safe_name, write_json, write_jsonl_rows, write_yaml
from recallbench.records import Episode, MemoryItem, Prediction, Score, write_jsonl
from recallbench.run.read._files import (
    CONFIG_FILE,
    EPISODES_DIR,
    ITEMS_DIR,
    MEMORY_DIR,
    PREDICTIONS_FILE,
    RUN_FILE,
    SCORES_FILE,
    SUMMARY_FILE,
    USAGE_FILE,
    RunSummary,
    attempt_path,
    summed_usage,
)
from recallbench.run.read._log import RunLog
from recallbench.verdict import JSONValue


def write_log(folder: Path, log: RunLog) -> None:
    """Refresh the heartbeat and write ``run.json`` (the log's current version)."""
    log.heartbeat_unix = time.time()
    write_json(folder / RUN_FILE, log.to_dict())


def write_config(folder: Path, config: Mapping[str, object]) -> None:
    """The resolved config, ``config.yaml``."""
    write_yaml(folder / CONFIG_FILE, dict(config))


def write_predictions(folder: Path, predictions: Sequence[Prediction]) -> None:
    """Every prediction of the run, ``predictions.jsonl``."""
    write_jsonl(folder / PREDICTIONS_FILE, predictions)


def write_scores(folder: Path, scores: Sequence[Score]) -> None:
    """Each prediction's metric values, ``scores.jsonl``."""
    write_jsonl(folder / SCORES_FILE, scores)


def write_summary(folder: Path, summary: RunSummary) -> Path:
    """The run's summary, ``summary.json``."""
    path = folder / SUMMARY_FILE
    write_json(path, summary)
    return path


def write_usage(folder: Path, attempt: int, usage: Mapping[str, object]) -> dict[str, JSONValue]:
    """Write attempt ``attempt``'s usage, then ``usage.json``, the sum over every attempt's."""
    write_json(attempt_path(folder, attempt), dict(usage))
    total = summed_usage(folder)
    write_json(folder / USAGE_FILE, total)
    return total


def items_path(folder: Path, episode_id: str) -> Path:
    """Where a finished episode's predictions are (``items/<episode>.jsonl``)."""
    return folder / ITEMS_DIR / f"{safe_name(episode_id)}.jsonl"


def write_items(folder: Path, episode_id: str, predictions: Sequence[Prediction]) -> None:
    """A finished episode's predictions (what a resume skips the episode by)."""
    write_jsonl(items_path(folder, episode_id), predictions)


def write_episode(
    folder: Path, episode: Episode, snapshots: Iterable[tuple[int, list[MemoryItem]]]
) -> None:
    """The episode as replayed (``episodes/``) and its store after every session (``memory/``)."""
    name = safe_name(episode.episode_id)
    rows = ({"after_session": i, "items": [m.to_dict() for m in items]} for i, items in snapshots)
    write_jsonl_rows(folder / MEMORY_DIR / f"{name}.jsonl", rows)
    write_json(folder / EPISODES_DIR / f"{name}.json", episode.to_dict(), indent=None)
