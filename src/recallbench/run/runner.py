"""One run = dataset x memory x generator x protocol -> a run folder (docs/running.md).

Run folder ``results/runs/<tag>/<stamp>/<job>/``::

    config.yaml        the resolved config (no secrets: API keys live only in the environment)
    run.json           git sha, package versions, dataset sha256, status (written in a finally),
                       attempt, pid, host, heartbeat (``run.record``); ``sources``: the sha256
                       of each project module it imported and file it read (``run.sources``)
    items/<ep>.jsonl   predictions of each finished episode (resume skips these episodes)
    predictions.jsonl  all predictions          scores.jsonl   per-item metric values
    summary.json       per metric: corpus value, item mean, n, per session, and episode-clustered
                       bootstrap 95% CIs of every value (``metrics.bootstrap``); ``memory``:
                       what the memory did per session (``metrics.activity``)
    usage.json         LLM usage and cost per task, per stage and in total, summed over the
                       attempts in usage/attempt-<n>.json; ``compute``: seconds spent in LM
                       scoring, embeddings, LLM calls and metrics, and the LM-score and
                       embedding cache hits (``recallbench.meter``)
    memory/<ep>.jsonl  the memory store after every session
    episodes/<ep>.json the episode as replayed (dialogue, questions): what ``recallbench view``
                       shows beside the predictions, so a run folder explains itself offline

A rerun with the same config finds every LLM call in the SQLite cache (zero uncached calls); a
rerun into the same folder (``resume_dir``) also skips finished episodes.
"""

from __future__ import annotations

import logging
import os
import platform
import signal
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recallbench import meter
from recallbench.errors import ConfigError, RunStopped
from recallbench.io import safe_name, write_json, write_jsonl_rows, write_yaml
from recallbench.llm.protocol import LLMClient
from recallbench.memory import MemoryMethod
from recallbench.metrics.summary import Summary, has_summary, read_summary, write_summary
from recallbench.parallel import ordered_map
from recallbench.protocols.base import EvalProtocol
from recallbench.records import Episode, MemoryItem, Prediction, read_jsonl, write_jsonl
from recallbench.run.imports import config_paths
from recallbench.run.provenance import episodes_sha256, git_state, package_versions
from recallbench.run.read import read_run
from recallbench.run.record import (
    CONFIG_HASH_VERSION,
    USABLE,
    HealthPolicy,
    RunInterrupted,
    config_hash,
    health_problems,
    stop_signals_raise,
    summed_usage,
    write_run_json,
)
from recallbench.run.resume import previous_info, refuse_foreign
from recallbench.run.sources import sources

if TYPE_CHECKING:
    from recallbench.run.tracking import WandbLogger

log = logging.getLogger(__name__)


class Runner:
    """Execute a protocol over episodes with a fresh memory method per episode and score it."""

    def __init__(
        self,
        run_dir: str | Path,
        *,
        protocol: EvalProtocol,
        make_method: Callable[[], MemoryMethod],
        llm: LLMClient,
        metrics: Sequence[str] = (),
        config: dict[str, Any] | None = None,
        progress: bool = True,
        logger: WandbLogger | None = None,
        health: HealthPolicy | None = None,
        workers: int = 1,
    ) -> None:
        self.run_dir = Path(run_dir)
        self.protocol = protocol
        self.make_method = make_method
        self.llm = llm
        self.metrics = list(metrics)
        self.config = config or {}
        self.progress = progress
        self.logger = logger
        self.health = health or HealthPolicy()
        self.workers = max(1, int(workers))
        self._make_lock = threading.Lock()
        self.attempt = 1
        self.info: dict[str, Any] = {}
        self.already_finished = False  # run() found this folder's run finished: nothing done
        self._metered = meter.snapshot()

    def run(self, episodes: Sequence[Episode]) -> Summary:
        """Run every episode (skipping finished ones), score, and write the run folder.

        The record stays honest whatever happens (``run.record``): SIGTERM/SIGINT leave
        ``interrupted`` with the counts done and re-raise ``RunInterrupted``; an error leaves
        ``failed``; a finished run whose tasks failed to parse too often is ``degraded``. Usage is
        written per attempt and summed over attempts into ``usage.json``.
        """
        previous = previous_info(self.run_dir)
        digest = config_hash(self.config)
        dataset_sha = episodes_sha256(episodes)
        refuse_foreign(self.run_dir, self.config, previous, digest, dataset_sha)
        if previous.get("status") in USABLE and has_summary(self.run_dir):
            self.info, self.already_finished = previous, True  # same config and data: done
            return read_summary(self.run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.attempt = int(previous.get("attempt", 0)) + 1
        self._seed_budget()
        self._metered = meter.snapshot()  # this run's share of the process meters starts here
        info = self.info = {
            "status": "running",
            "attempt": self.attempt,
            "config_hash": digest,
            "config_hash_version": CONFIG_HASH_VERSION,  # run.resume.recorded_hash migrates
            "overrides": list(self.config.get("overrides") or []),
            **git_state(),
            "versions": package_versions(),
            "dataset_sha256": dataset_sha,
            "n_episodes": len(episodes),
            "started_unix": time.time(),
            "first_started_unix": previous.get("first_started_unix")
            or previous.get("started_unix")
            or time.time(),
            "host": platform.node(),
            "pid": os.getpid(),
        }
        write_run_json(self.run_dir, info)
        write_yaml(self.run_dir / "config.yaml", self.config)
        predictions: list[Prediction] = []
        try:
            with stop_signals_raise():
                self.protocol.prepare(episodes)  # e.g. per-fold thresholds (memory_ops)
                if source := self.protocol.provenance():  # e.g. an imported answer file
                    info["imported"] = source
                predictions = self._replay(episodes)
                info["replayed_unix"] = time.time()  # replay ends, scoring starts
                if not predictions:
                    raise ConfigError(
                        f"{len(episodes)} episode(s) gave no predictions for protocol "
                        f"{self.protocol.name!r}: nothing to score (check the dataset's sessions "
                        "and the protocol's options)"
                    )
                write_jsonl(self.run_dir / "predictions.jsonl", predictions)
                with meter.timed("metrics"):
                    scores, summary = self.protocol.score(predictions, self.metrics)
            write_jsonl(self.run_dir / "scores.jsonl", scores)
            summary["n_episodes"] = len(episodes)
            summary["n_predictions"] = len(predictions)
            summary["memory"] = read_run(self.run_dir).memory_activity(predictions)
            write_summary(self.run_dir, summary)
            info["sources"] = self._sources()  # what it ran and read: its reuse key
            usage = self._flush_usage()
            problems = health_problems(self.llm.usage.to_dict(), self.health)
            info["status"] = "degraded" if problems else "finished"
            if problems:
                info["health"] = problems
            if self.logger is not None:
                self.logger.log_run(self.config, summary, predictions, usage)
            return summary
        except RunStopped as exc:  # a budget, or the store went away: stopped cleanly, resumable
            info["status"] = "interrupted"
            info["reason"] = exc.reason
            raise
        except (RunInterrupted, KeyboardInterrupt) as exc:
            stop = exc if isinstance(exc, RunInterrupted) else RunInterrupted(signal.SIGINT)
            info["status"] = "interrupted"
            info["signal"] = stop.signal_name
            raise stop from None
        except BaseException as exc:
            info["status"] = "failed"
            info["error"] = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            info["generator"] = self.llm.describe()  # incl. the structured mode in force
            info["finished_unix"] = time.time()
            info["episodes_done"] = len(list((self.run_dir / "items").glob("*.jsonl")))
            info["predictions_done"] = len(predictions) or self._items_predictions()
            write_run_json(self.run_dir, info)
            self._flush_usage()

    def _sources(self) -> dict[str, Any]:
        """The project modules this process imported and the project and data files it read
        (``run.sources``), but the results and cache it writes."""
        paths = self.config.get("paths") or {}
        writes = [paths.get("results_dir") or "", paths.get("cache_dir") or "", self.run_dir]
        return sources([paths.get("data_dir") or ""], writes, config_paths(self.config))

    def _seed_budget(self) -> None:
        """A resumed run's budget counts what its earlier attempts sent and spent."""
        budget = self.llm.meter  # llm.budget.Meter (not the process meters)
        if not budget.budget or self.attempt == 1:
            return
        totals = summed_usage(self.run_dir).get("totals") or {}
        sent = int(totals.get("calls") or 0) - int(totals.get("cached_calls") or 0)
        budget.seed(float(totals.get("cost_usd") or 0.0), sent)

    def _items_predictions(self) -> int:
        """How many predictions the finished episodes' item files hold (cheap line count)."""
        return sum(
            sum(1 for line in p.open(encoding="utf-8") if line.strip())
            for p in (self.run_dir / "items").glob("*.jsonl")
        )

    def _flush_usage(self) -> dict[str, Any]:
        """Write this attempt's usage and the sum over attempts (``usage.json``); return the sum."""
        usage = {**self.llm.usage.to_dict(), "compute": meter.delta(self._metered)}
        write_json(self.run_dir / "usage" / f"attempt-{self.attempt}.json", usage)
        total = summed_usage(self.run_dir)
        write_json(self.run_dir / "usage.json", total)
        return total

    def _replay(self, episodes: Sequence[Episode]) -> list[Prediction]:
        """Replay the episodes not finished yet, ``workers`` at a time; keep the input order.

        Each episode gets a fresh method; all share the one LLM client, whose concurrency bound
        holds across them. An episode's items and memory snapshots are written by its worker as
        soon as it finishes; predictions are returned in episode order, so files do not depend
        on ``workers``.
        """
        from tqdm.auto import tqdm

        items_dir = self.run_dir / "items"
        done: dict[int, list[Prediction]] = {}
        todo: list[tuple[int, Episode]] = []
        for i, episode in enumerate(episodes):
            item_path = items_dir / f"{safe_name(episode.episode_id)}.jsonl"
            finished = self._read_items(item_path) if item_path.exists() else None
            if finished is not None:  # finished in an earlier, interrupted run
                done[i] = finished
            else:
                todo.append((i, episode))
        bar = tqdm(
            total=len(episodes),
            initial=len(done),
            desc=f"{self.protocol.name}",
            unit="ep",
            disable=not self.progress,
        )
        try:
            for (i, _), predictions in ordered_map(self._run_one, todo, self.workers):
                done[i] = predictions
                self._flush_usage()
                write_run_json(self.run_dir, self.info)  # heartbeat
                totals = self.llm.usage.to_dict()["totals"]
                bar.update(1)
                bar.set_postfix(
                    preds=sum(len(p) for p in done.values()),
                    calls=totals.get("calls", 0),
                    cost=f"${totals.get('cost_usd') or 0:.4f}",
                )
        finally:
            bar.close()
        out = [p for i in range(len(episodes)) for p in done.get(i, ())]
        return out + self._extra(items_dir)

    def _run_one(self, job: tuple[int, Episode]) -> list[Prediction]:
        """Replay one episode with a fresh method; write its items and snapshots."""
        _, episode = job
        with self._make_lock:  # config instantiation is not meant to run in parallel
            method = self.make_method()
        result = self.protocol.run_episode(episode, method, self.llm)
        self._write_snapshots(episode.episode_id, result.snapshots)
        write_json(
            self.run_dir / "episodes" / f"{safe_name(episode.episode_id)}.json",
            episode.to_dict(),
            indent=None,
        )
        write_jsonl(
            self.run_dir / "items" / f"{safe_name(episode.episode_id)}.jsonl", result.predictions
        )
        return result.predictions

    def _extra(self, items_dir: Path) -> list[Prediction]:
        """Items of the protocol that belong to no episode (memory_ops' labelled pairs)."""
        path = items_dir / "_extra.jsonl"
        if path.exists() and (done := self._read_items(path)) is not None:
            return done
        got = self.protocol.run_extra(self.make_method, self.llm)
        if got:  # most protocols have none: no file
            write_jsonl(path, got)
        return got

    def _read_items(self, path: Path) -> list[Prediction] | None:
        """Read a finished episode's items; a corrupt file is set aside (None: redo the episode)."""
        try:
            return read_jsonl(path, Prediction)
        except (ValueError, KeyError, TypeError) as exc:
            aside = path.with_name(f"{path.name}.corrupt-{self.attempt}")
            os.replace(path, aside)
            message = (
                f"{path}: unreadable ({type(exc).__name__}: {str(exc)[:120]}); set aside as "
                f"{aside.name}, the episode is run again"
            )
            log.warning(message)
            self.info.setdefault("redone_episodes", []).append(
                {"items": path.name, "reason": message}
            )
            return None

    def _write_snapshots(
        self, episode_id: str, snapshots: list[tuple[int, list[MemoryItem]]]
    ) -> None:
        rows = (
            {"after_session": i, "items": [m.to_dict() for m in items]} for i, items in snapshots
        )
        write_jsonl_rows(self.run_dir / "memory" / f"{safe_name(episode_id)}.jsonl", rows)
