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
from recallbench.llm.protocol import LLMClient
from recallbench.memory import MemoryMethod
from recallbench.parallel import ordered_map
from recallbench.protocols.base import EvalProtocol
from recallbench.records import Episode, Prediction, read_jsonl
from recallbench.run.imports import config_paths
from recallbench.run.prefetch import prefetch_embeddings
from recallbench.run.provenance import episodes_sha256, git_state, package_versions
from recallbench.run.read import (
    ITEMS_DIR,
    RunLog,
    RunSummary,
    RunUsage,
    items_path,
    read_run,
    write_config,
    write_episode,
    write_items,
    write_log,
    write_predictions,
    write_scores,
    write_summary,
    write_usage,
)
from recallbench.run.record import (
    CONFIG_HASH_VERSION,
    HealthPolicy,
    RunInterrupted,
    config_hash,
    health_problems,
    stop_signals_raise,
)
from recallbench.run.resume import previous_log, refuse_foreign
from recallbench.run.sources import sources
from recallbench.verdict import JSONValue

if TYPE_CHECKING:
    from recallbench.run.tracking import WandbLogger

log = logging.getLogger(__name__)

EXTRA_ITEMS = "_extra"  # items/_extra.jsonl: a protocol's items of no episode (run_extra)


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
        self.log = RunLog()  # run.json: filled as the run goes (status "unknown": not started)
        self.already_finished = False  # run() found this folder's run finished: nothing done
        self._metered = meter.snapshot()

    def run(self, episodes: Sequence[Episode]) -> RunSummary:
        """Run every episode (skipping finished ones), score, and write the run folder.

        The record stays honest whatever happens (``run.record``): SIGTERM/SIGINT leave
        ``interrupted`` with the counts done and re-raise ``RunInterrupted``; an error leaves
        ``failed``; a finished run whose tasks failed to parse too often is ``degraded``. Usage is
        written per attempt and summed over attempts into ``usage.json``.
        """
        previous = previous_log(self.run_dir)
        digest = config_hash(self.config)
        dataset_sha = episodes_sha256(episodes)
        refuse_foreign(self.run_dir, self.config, previous, digest, dataset_sha)
        if previous is not None and (done := read_run(self.run_dir)).usable:
            self.log, self.already_finished = previous, True  # same config and data: done
            return done.summary
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.attempt = (previous.attempt or 0) + 1 if previous is not None else 1
        self._seed_budget()
        self._metered = meter.snapshot()  # this run's share of the process meters starts here
        now = time.time()
        first = (previous.first_started_unix or previous.started_unix) if previous else None
        log = self.log = RunLog(
            status="running",
            attempt=self.attempt,
            config_hash=digest,
            config_hash_version=CONFIG_HASH_VERSION,  # run.resume.recorded_hash migrates older
            overrides=[str(o) for o in self.config.get("overrides") or []],
            **git_state(),
            versions=package_versions(),
            dataset_sha256=dataset_sha,
            n_episodes=len(episodes),
            started_unix=now,
            first_started_unix=first or now,
            host=platform.node(),
            pid=os.getpid(),
        )
        write_log(self.run_dir, log)
        write_config(self.run_dir, self.config)
        predictions: list[Prediction] = []
        try:
            with stop_signals_raise():
                self.protocol.prepare(episodes)  # e.g. per-fold thresholds (memory_ops)
                if source := self.protocol.provenance():  # e.g. an imported answer file
                    log.imported = source
                predictions = self.protocol.finish(self._replay(episodes))  # e.g. lamp1's encode
                log.replayed_unix = time.time()  # replay ends, scoring starts
                if not predictions:
                    raise ConfigError(
                        f"{len(episodes)} episode(s) gave no predictions for protocol "
                        f"{self.protocol.name!r}: nothing to score (check the dataset's sessions "
                        "and the protocol's options)"
                    )
                write_predictions(self.run_dir, predictions)
                with meter.timed("metrics"):
                    scores, scored = self.protocol.score(predictions, self.metrics)
            write_scores(self.run_dir, scores)
            summary: RunSummary = {
                **scored,
                "n_episodes": len(episodes),
                "n_predictions": len(predictions),
                "memory": read_run(self.run_dir).memory_activity(predictions),
            }
            write_summary(self.run_dir, summary)
            log.sources = self._sources()  # what it ran and read: its reuse key
            log.versions = package_versions()  # with the optional libraries it imported
            usage = self._flush_usage()
            problems = health_problems(self.llm.usage.to_dict(), self.health)
            log.status = "degraded" if problems else "finished"
            if problems:
                log.health = problems
            if self.logger is not None:
                self.logger.log_run(self.config, summary, predictions, usage)
            return summary
        except RunStopped as exc:  # a budget, or the store went away: stopped cleanly, resumable
            log.status = "interrupted"
            log.reason = exc.reason
            raise
        except (RunInterrupted, KeyboardInterrupt) as exc:
            stop = exc if isinstance(exc, RunInterrupted) else RunInterrupted(signal.SIGINT)
            log.status = "interrupted"
            log.signal = stop.signal_name
            raise stop from None
        except BaseException as exc:
            log.status = "failed"
            log.error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            log.generator = self.llm.describe()  # incl. the structured mode in force
            log.finished_unix = time.time()
            log.episodes_done = len(list((self.run_dir / ITEMS_DIR).glob("*.jsonl")))
            log.predictions_done = len(predictions) or self._items_predictions()
            write_log(self.run_dir, log)
            self._flush_usage()

    def _sources(self) -> dict[str, dict[str, str]]:
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
        usage = read_run(self.run_dir, need_record=False).usage
        totals = usage.totals if usage is not None else RunUsage.from_dict({}).totals
        budget.seed(totals.cost_usd or 0.0, totals.sent)

    def _items_predictions(self) -> int:
        """How many predictions the finished episodes' item files hold (cheap line count)."""
        return sum(
            sum(1 for line in p.open(encoding="utf-8") if line.strip())
            for p in (self.run_dir / ITEMS_DIR).glob("*.jsonl")
        )

    def _flush_usage(self) -> dict[str, JSONValue]:
        """Write this attempt's usage and the sum over attempts; return the sum."""
        usage = {**self.llm.usage.to_dict(), "compute": meter.delta(self._metered)}
        return write_usage(self.run_dir, self.attempt, usage)

    def _replay(self, episodes: Sequence[Episode]) -> list[Prediction]:
        """Replay the episodes not finished yet, ``workers`` at a time; keep the input order.

        Each episode gets a fresh method; all share the one LLM client, whose concurrency bound
        holds across them. An episode's items and memory snapshots are written by its worker as
        soon as it finishes; predictions are returned in episode order, so files do not depend
        on ``workers``.
        """
        from tqdm.auto import tqdm

        done: dict[int, list[Prediction]] = {}
        todo: list[tuple[int, Episode]] = []
        for i, episode in enumerate(episodes):
            item_path = items_path(self.run_dir, episode.episode_id)
            finished = self._read_items(item_path) if item_path.exists() else None
            if finished is not None:  # finished in an earlier, interrupted run
                done[i] = finished
            else:
                todo.append((i, episode))
        with self._make_lock:  # what the episodes fix, embedded in a few large calls first
            todo_episodes = [episode for _, episode in todo]
            prefetch_embeddings(
                self.make_method, todo_episodes, None, self.progress, self.protocol.fixed_queries
            )
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
                write_log(self.run_dir, self.log)  # heartbeat
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
        return out + self._extra()

    def _run_one(self, job: tuple[int, Episode]) -> list[Prediction]:
        """Replay one episode with a fresh method; write its items and snapshots."""
        _, episode = job
        with self._make_lock:  # config instantiation is not meant to run in parallel
            method = self.make_method()
        result = self.protocol.run_episode(episode, method, self.llm)
        write_episode(self.run_dir, episode, result.snapshots)
        write_items(self.run_dir, episode.episode_id, result.predictions)
        return result.predictions

    def _extra(self) -> list[Prediction]:
        """Items of the protocol that belong to no episode (memory_ops' labelled pairs)."""
        path = items_path(self.run_dir, EXTRA_ITEMS)
        if path.exists() and (done := self._read_items(path)) is not None:
            return done
        got = self.protocol.run_extra(self.make_method, self.llm)
        if got:  # most protocols have none: no file
            write_items(self.run_dir, EXTRA_ITEMS, got)
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
            redone = self.log.redone_episodes = self.log.redone_episodes or []
            redone.append({"items": path.name, "reason": message})
            return None
