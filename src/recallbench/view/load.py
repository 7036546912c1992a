"""Read one run folder into plain records for the report: nothing here runs a method or a model.

Files read (``runner`` writes them): ``run.json``, ``config.yaml`` (through
``analysis.runs``), ``summary.json``, ``usage.json``, ``predictions.jsonl`` (or, for a run that
did not finish, its per-episode ``items/``), ``scores.jsonl``, ``memory/<episode>.jsonl`` and
``episodes/<episode>.json`` (the dialogue; older runs lack it, and the report then shows the
turns the predictions quote). A missing file is listed in ``RunFiles.missing``, never invented;
a malformed line is an error naming the file and the line.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from recallbench.analysis.runs import RunInfo, runs_in
from recallbench.errors import DataNotFoundError, DatasetFormatError
from recallbench.io import safe_name
from recallbench.metrics.summary import SUMMARY_FILE, Summary, has_summary, read_summary
from recallbench.records import Episode, MemoryItem, Prediction

T = TypeVar("T")
Snapshot = tuple[int, tuple[MemoryItem, ...]]  # (after session, the store then)


@dataclass(frozen=True)
class RunFiles:
    """What a run folder holds, as records."""

    info: RunInfo
    record: dict[str, Any]  # run.json
    summary: Summary
    usage: dict[str, Any]
    predictions: tuple[Prediction, ...]
    scores: dict[str, dict[str, float]]  # pred_id -> metric -> value
    snapshots: dict[str, tuple[Snapshot, ...]]  # episode_id -> stores after each session
    episodes: dict[str, Episode] = field(default_factory=dict)
    missing: tuple[str, ...] = ()  # files the folder lacks (an interrupted run has no summary)

    @property
    def label(self) -> str:
        """``tag/stamp/job``: how the report names the run."""
        return "/".join(self.info.key)

    def item_metrics(self) -> list[str]:
        """Metrics with per-item values: in the order the run's config names them (its
        ``metrics.names``, else its protocol's ``metrics``), then the summary's, then others."""
        found = {m for values in self.scores.values() for m in values}
        cfg = self.info.config
        named = list((cfg.get("metrics") or {}).get("names") or [])
        named += list((cfg.get("protocol") or {}).get("metrics") or [])
        ordered = [
            m for m in dict.fromkeys([*named, *self.summary.get("metrics", {})]) if m in found
        ]
        return ordered + sorted(found - set(ordered))


def _lines(path: Path, parse: Callable[[dict[str, Any]], T]) -> list[T]:
    out = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                out.append(parse(json.loads(line)))
            except (ValueError, KeyError, TypeError) as exc:
                raise DatasetFormatError(
                    f"{path} line {number}: not a record this file should hold ({exc!r})"
                ) from exc
    return out


def _json(path: Path, missing: list[str]) -> dict[str, Any]:
    if not path.is_file():
        missing.append(path.name)
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise DatasetFormatError(f"{path}: not JSON ({exc})") from exc
    return data if isinstance(data, dict) else {}


def _predictions(run_dir: Path, missing: list[str]) -> list[Prediction]:
    path = run_dir / "predictions.jsonl"
    if path.is_file():
        return _lines(path, Prediction.from_dict)
    missing.append(path.name)  # not finished: show what the finished episodes wrote
    return [
        p
        for item in sorted((run_dir / "items").glob("*.jsonl"))
        for p in _lines(item, Prediction.from_dict)
    ]


def _scores(run_dir: Path, missing: list[str]) -> dict[str, dict[str, float]]:
    path = run_dir / "scores.jsonl"
    if not path.is_file():
        missing.append(path.name)
        return {}
    out: dict[str, dict[str, float]] = {}
    for pred_id, metric, value in _lines(
        path, lambda d: (d["pred_id"], d["metric"], float(d["value"]))
    ):
        out.setdefault(pred_id, {})[metric] = value
    return out


def _snapshots(path: Path) -> tuple[Snapshot, ...]:
    def parse(row: dict[str, Any]) -> Snapshot:
        items = tuple(MemoryItem.from_dict(i) for i in row["items"])
        return int(row["after_session"]), items

    return tuple(_lines(path, parse))


def _episodes(run_dir: Path) -> dict[str, Episode]:
    out = {}
    for path in sorted((run_dir / "episodes").glob("*.json")):
        try:
            episode = Episode.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, KeyError, TypeError) as exc:
            raise DatasetFormatError(f"{path}: not an episode record ({exc!r})") from exc
        out[episode.episode_id] = episode
    return out


def load_run(folder: str | Path) -> RunFiles:
    """Read the run folder ``folder`` (an error naming it when it is not one)."""
    run_dir = Path(folder)
    if not (run_dir / "run.json").is_file():
        raise DataNotFoundError(
            f"{run_dir}: not a run folder (no run.json); a run folder is "
            "results/runs/<tag>/<stamp>/<job>/, a sweep folder results/runs/<tag>/<stamp>/"
        )
    (info,) = runs_in(run_dir, finished=False)
    missing: list[str] = []
    record = _json(run_dir / "run.json", missing)
    summary: Summary = {"metrics": {}}  # an unscored run: no metric
    if has_summary(run_dir):
        summary = read_summary(run_dir)
    else:
        missing.append(SUMMARY_FILE)
    usage = _json(run_dir / "usage.json", missing)
    predictions = _predictions(run_dir, missing)
    scores = _scores(run_dir, missing)
    episodes = _episodes(run_dir)
    ids = [*episodes, *dict.fromkeys(p.episode_id for p in predictions)]
    by_file = {safe_name(e): e for e in ids}
    snapshots = {
        by_file.get(path.stem, path.stem): _snapshots(path)
        for path in sorted((run_dir / "memory").glob("*.jsonl"))
    }
    if not episodes:
        missing.append("episodes/")
    return RunFiles(
        info=info,
        record=record,
        summary=summary,
        usage=usage,
        predictions=tuple(predictions),
        scores=scores,
        snapshots=snapshots,
        episodes=episodes,
        missing=tuple(missing),
    )


def load_folder(folder: str | Path) -> list[RunFiles]:
    """Read every run under ``folder`` (a run, a sweep, a tag or a results folder)."""
    if not Path(folder).is_dir():
        raise DataNotFoundError(f"{folder}: no such folder (expected a run or sweep folder)")
    runs = runs_in(folder, finished=False)
    if not runs:
        raise DataNotFoundError(
            f"{folder}: no run folders in it (a run folder holds run.json; expected "
            "results/runs/<tag>/<stamp>/<job>/ or a sweep folder above such folders)"
        )
    return [load_run(run.path) for run in runs]
