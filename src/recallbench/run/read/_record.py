"""``read_run(folder) -> RunRecord``: a run folder read once, each part loaded when first asked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import yaml

from recallbench.errors import DataNotFoundError, DatasetFormatError
from recallbench.io import safe_name
from recallbench.metrics.activity import memory_activity
from recallbench.records import Episode, MemoryItem, Prediction, Score
from recallbench.run.read._config import RunConfig
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
    RunUsage,
    Snapshot,
    is_run_folder,
    json_lines,
    json_object,
    prediction,
    read_log,
    read_snapshots,
    read_summary,
)
from recallbench.run.read._log import RunLog
from recallbench.run.read._summary import MetricSummary
from recallbench.run.record import USABLE, is_stale
from recallbench.verdict import JSONValue


@dataclass(frozen=True)
class Provenance:
    """``run.json``: the run's status and what it was made from; ``log`` is the whole record."""

    status: str  # run.json's, but ``stale`` for a ``running`` record whose process is gone
    attempt: int | None
    n_episodes: int | None
    commit: str | None  # git sha
    dataset_sha256: str | None
    config_hash: str | None
    sources: Mapping[str, object] | None  # None: recorded before run.sources existed
    health: tuple[Mapping[str, object], ...]  # the unhealthy tasks of a degraded run
    error: str | None
    log: RunLog = field(default_factory=RunLog)

    @classmethod
    def from_log(cls, log: RunLog) -> Provenance:
        """The provenance a ``RunLog`` (a run.json of any version) records."""
        return cls(
            status="stale" if is_stale(log.to_dict()) else log.status,
            attempt=log.attempt,
            n_episodes=log.n_episodes,
            commit=log.git_sha,
            dataset_sha256=log.dataset_sha256,
            config_hash=log.config_hash,
            sources=log.sources,
            health=tuple(log.health or ()),
            error=log.error,
            log=log,
        )

    @classmethod
    def from_dict(cls, info: Mapping[str, object]) -> Provenance:
        """Build from a ``run.json`` object (every key may be absent)."""
        return cls.from_log(RunLog.from_dict(info))


def read_config(folder: Path) -> RunConfig:
    """A run folder's ``config.yaml`` (empty when absent or null); bad YAML names the file."""
    path = folder / CONFIG_FILE
    if not path.is_file():
        return RunConfig()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise DatasetFormatError(f"{path}: not YAML ({exc})") from None
    if data is not None and not isinstance(data, Mapping):
        raise DatasetFormatError(f"{path}: expected a mapping, got {type(data).__name__}")
    return RunConfig(dict(data or {}))


@dataclass(frozen=True, init=False)
class RunRecord:
    """A run folder ``results/runs/<tag>/<stamp>/<job>/`` and what it holds (lazily).

    ``config`` may be given (a ``RunConfig`` or its mapping): a record of a run as if made with
    another config, e.g. in a test; otherwise it is read from the folder when first asked.
    """

    path: Path
    provenance: Provenance

    def __init__(
        self,
        path: Path,
        provenance: Provenance,
        config: RunConfig | Mapping[str, object] | None = None,
    ) -> None:
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "provenance", provenance)
        if config is not None:  # fills the cached property
            self.__dict__["config"] = (
                config if isinstance(config, RunConfig) else RunConfig(dict(config))
            )

    @property
    def tag(self) -> str:
        return self.path.parent.parent.name

    @property
    def stamp(self) -> str:
        return self.path.parent.name

    @property
    def job(self) -> str:
        return self.path.name

    @property
    def key(self) -> tuple[str, str, str]:
        """``(tag, stamp, job)``: what identifies a run among all runs of a results folder."""
        return (self.tag, self.stamp, self.job)

    @property
    def status(self) -> str:
        return self.provenance.status

    @cached_property
    def config(self) -> RunConfig:
        """The resolved config the run was made with (``config.yaml``)."""
        return read_config(self.path)

    @property
    def choices(self) -> dict[str, str | None]:
        return self.config.choices

    def choice(self, group: str) -> str | None:
        """Return the config-group choice (e.g. ``memory``) the run was made with."""
        return self.config.choice(group)

    @property
    def overrides(self) -> tuple[str, ...]:
        return self.config.overrides

    @property
    def missing(self) -> tuple[str, ...]:
        """The files of a finished run this folder lacks (an interrupted run has no summary)."""
        names = (SUMMARY_FILE, USAGE_FILE, PREDICTIONS_FILE, SCORES_FILE, CONFIG_FILE)
        return tuple(n for n in names if not (self.path / n).is_file())

    @property
    def has_summary(self) -> bool:
        """Was the run scored (has it a ``summary.json``)?"""
        return (self.path / SUMMARY_FILE).is_file()

    @property
    def usable(self) -> bool:
        """May tables use this run: finished or degraded (``run.record.USABLE``), and scored."""
        return self.status in USABLE and self.has_summary

    @cached_property
    def summary(self) -> RunSummary:
        """``summary.json`` (``metrics.summary``); ``{"metrics": {}}`` for an unscored run."""
        return read_summary(self.path) if self.has_summary else {"metrics": {}}

    @cached_property
    def metrics(self) -> dict[str, MetricSummary]:
        """The summary's metrics, typed (``MetricSummary``), in the file's order."""
        entries = self.summary.get("metrics") or {}
        return {name: MetricSummary.from_entry(name, e) for name, e in entries.items()}

    @cached_property
    def predictions(self) -> tuple[Prediction, ...]:
        """``predictions.jsonl``; a run that did not finish: its finished episodes' items."""
        path = self.path / PREDICTIONS_FILE
        if path.is_file():
            return tuple(json_lines(path, prediction))
        items = sorted((self.path / ITEMS_DIR).glob("*.jsonl"))
        return tuple(p for f in items for p in json_lines(f, prediction))

    @cached_property
    def scores(self) -> tuple[Score, ...]:
        """``scores.jsonl``: each prediction's metric values (() when absent)."""
        path = self.path / SCORES_FILE
        return tuple(json_lines(path, Score.from_dict)) if path.is_file() else ()

    @cached_property
    def usage(self) -> RunUsage | None:
        """``usage.json`` (None: the folder has none, e.g. an imported or very old run)."""
        path = self.path / USAGE_FILE
        return RunUsage.from_dict(json_object(path)) if path.is_file() else None

    def snapshots_of(self, episode_id: str) -> tuple[Snapshot, ...]:
        """The stores after every session of ``episode_id`` (() when the run kept none)."""
        return read_snapshots(self.path / MEMORY_DIR / f"{safe_name(episode_id)}.jsonl")

    @cached_property
    def snapshots(self) -> dict[str, tuple[Snapshot, ...]]:
        """Every episode's stores, keyed by episode id (a file's stem when no record names it)."""
        ids = [*self.episodes, *dict.fromkeys(p.episode_id for p in self.predictions)]
        by_file = {safe_name(e): e for e in ids}
        return {
            by_file.get(path.stem, path.stem): read_snapshots(path)
            for path in sorted((self.path / MEMORY_DIR).glob("*.jsonl"))
        }

    @cached_property
    def stores(self) -> dict[tuple[str, int], tuple[MemoryItem, ...]]:
        """Every store, keyed by ``(episode_id, after_session)``."""
        return {(e, s.after_session): s.items for e, found in self.snapshots.items() for s in found}

    @cached_property
    def episodes(self) -> dict[str, Episode]:
        """The episodes as replayed (``episodes/``; {} for runs written before that folder)."""
        out = {}
        for path in sorted((self.path / EPISODES_DIR).glob("*.json")):
            try:
                episode = Episode.from_dict(json_object(path))
            except (KeyError, TypeError) as exc:
                raise DatasetFormatError(f"{path}: not an episode record ({exc!r})") from exc
            out[episode.episode_id] = episode
        return out

    def dataset_episodes(self) -> dict[str, Episode]:
        """The episodes of the run's dataset, reloaded from its config (cached per dataset)."""
        loaded = self.config.dataset.load(str(self.path / CONFIG_FILE))
        return {e.episode_id: e for e in loaded}

    def episodes_for(self, episode_ids: Sequence[str]) -> dict[str, Episode]:
        """The episodes ``episode_ids`` as replayed, else reloaded from the run's dataset."""
        out = {e: self.episodes[e] for e in episode_ids if e in self.episodes}
        if any(e not in out for e in episode_ids):
            loaded = self.dataset_episodes()
            out.update({e: loaded[e] for e in episode_ids if e not in out and e in loaded})
        lost = [e for e in episode_ids if e not in out]
        if lost:
            raise ValueError(
                f"{self.path}: episode {lost[0]!r} is neither in episodes/ nor the dataset"
            )
        return out

    def memory_activity(
        self, predictions: Sequence[Prediction] | None = None
    ) -> dict[str, JSONValue]:
        """What the memory did, from the snapshots and ``predictions`` (default: the run's)
        (``metrics.activity``; the rule of "in memory" follows the run's method)."""
        files = sorted((self.path / MEMORY_DIR).glob("*.jsonl"))
        found = {path.stem: read_snapshots(path) for path in files}
        preds = self.predictions if predictions is None else predictions
        return memory_activity(found, preds, self.config.memory.decayed_recallable)


def read_run(folder: str | Path, *, need_record: bool = True) -> RunRecord:
    """Read the run folder ``folder``: ``run.json`` now, every other file when first asked.

    Raises ``DataNotFoundError`` naming the folder when it holds no ``run.json`` (unless
    ``need_record`` is False: then a folder of run files without one, e.g. predictions copied
    from elsewhere, reads with status ``unknown``) and ``DatasetFormatError`` naming the file
    when ``run.json`` is not a JSON object.
    """
    path = Path(folder)
    if not need_record and not is_run_folder(path):
        return RunRecord(path, Provenance.from_log(RunLog()))
    if not is_run_folder(path):
        raise DataNotFoundError(
            f"{path}: not a run folder (no {RUN_FILE}); a run folder is "
            "results/runs/<tag>/<stamp>/<job>/, a sweep folder results/runs/<tag>/<stamp>/"
        )
    return RunRecord(path, Provenance.from_log(read_log(path)))
