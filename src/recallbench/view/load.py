"""Read one run folder into plain records for the report: nothing here runs a method or a model.

Every file is read through the run folder's one reader (``run.read.read_run``): status,
config, summary, usage, the predictions (or, for a run that did not finish, its per-episode
items), the scores, the stores after every session and the episodes as replayed (the dialogue;
older runs lack them, and the report then shows the turns the predictions quote). A missing
file is listed in ``RunFiles.missing``, never invented; a malformed line is an error naming the
file and the line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recallbench.analysis.runs import runs_in
from recallbench.errors import DataNotFoundError
from recallbench.metrics.summary import Summary
from recallbench.records import Episode, Prediction
from recallbench.run.read import EPISODES_DIR, RunRecord, Snapshot, read_run


@dataclass(frozen=True)
class RunFiles:
    """What a run folder holds, as records."""

    info: RunRecord
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
        named = [*cfg.metric_names, *cfg.protocol.metrics]
        ordered = [
            m for m in dict.fromkeys([*named, *self.summary.get("metrics", {})]) if m in found
        ]
        return ordered + sorted(found - set(ordered))


def load_run(folder: str | Path) -> RunFiles:
    """Read the run folder ``folder`` (an error naming it when it is not one)."""
    run = read_run(folder)
    scores: dict[str, dict[str, float]] = {}
    for score in run.scores:
        scores.setdefault(score.pred_id, {})[score.metric] = score.value
    missing = list(run.missing)
    if not run.episodes:
        missing.append(f"{EPISODES_DIR}/")
    return RunFiles(
        info=run,
        record=run.provenance.log.to_dict(),
        summary=run.summary,
        usage=dict(run.usage.raw) if run.usage is not None else {},
        predictions=run.predictions,
        scores=scores,
        snapshots=run.snapshots,
        episodes=run.episodes,
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
