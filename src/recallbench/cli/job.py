"""One job of a command, as the command line runs it: the run layer's ``run.job.run_job`` with
the parts only ``cli`` can build (``HydraParts``: the dataset, the meter, the models and the
runner from the composed config) and the process's exit.

``run`` is the entry (``cli.main`` calls it for every job of a sweep, ``recallbench matrix`` for
every cell, ``import-answers`` for its one job); the job's lifecycle (its folders, store, reuse,
sweep record, stop lines, end) is ``run.job``'s.
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from omegaconf import DictConfig

from recallbench.cli.build import (
    build_dataset,
    build_embedder,
    build_generator,
    build_memory_factory,
    build_protocol,
    job_metrics,
    plain,
)
from recallbench.cli.config import check_run_keys, resolve_workers, select_episodes
from recallbench.cli.launch import Launch
from recallbench.records import JSON, Episode
from recallbench.run.job import JobPlace, run_job

if TYPE_CHECKING:
    from recallbench.llm.budget import Meter
    from recallbench.run.runner import Runner
    from recallbench.store import Store

__all__ = ["HydraParts", "build_runner", "run"]


def build_runner(
    cfg: DictConfig, run_dir: Path, config: dict[str, JSON], meter: Meter, n_episodes: int
) -> Runner:
    """The job's models (LLM, embedder, protocol, memory factory) and its ``Runner``; a plan
    (a dry meter) gets no metrics and no tracking."""
    from recallbench.llm.lm_scores import use_score_cache
    from recallbench.metrics.cache import use_metric_cache
    from recallbench.run.record import HealthPolicy
    from recallbench.run.runner import Runner
    from recallbench.run.tracking import WandbLogger

    cache = Path(cfg.paths.cache_dir)
    use_score_cache(cache / "lm_scores.sqlite")  # LUFY's P, PPL metrics
    # MAUVE, BERTScore, PPL results; MAUVE's features go through the embedding cache
    use_metric_cache(cache / "metric_results.sqlite", cache / "embeddings.sqlite")
    llm = build_generator(cfg.generator, cache / "llm.sqlite", meter=meter)
    embedder = build_embedder(cfg.embedder, cfg.paths.cache_dir)
    protocol = build_protocol(cfg.protocol, int(cfg.seed), llm, embedder, cfg.paths.cache_dir)
    protocol.check_metrics(job_metrics(cfg))  # a name it cannot score: before replay
    metrics = [] if meter.dry else job_metrics(cfg)
    health = HealthPolicy.from_config(config.get("health"))
    llm.breaker.after = health.breaker_after
    logger = None
    if not meter.dry:
        wandb = cfg.wandb
        verbose = bool(wandb.get("verbose", False))
        logger = WandbLogger(wandb.project, wandb.mode, tags=[cfg.tag], verbose=verbose)
    return Runner(
        run_dir,
        protocol=protocol,
        make_method=build_memory_factory(cfg.memory, llm, embedder),
        llm=llm,
        metrics=metrics,
        config=config,
        progress=bool(cfg.progress),
        logger=logger,
        health=health,
        workers=resolve_workers(cfg.get("workers", "auto"), llm, n_episodes),
    )


@dataclass(frozen=True)
class HydraParts:
    """``run.job.JobParts`` from a composed config: what the run layer cannot build itself."""

    cfg: DictConfig
    launch: Launch
    job: str

    @property
    def planning(self) -> bool:
        return self.launch.planning

    def episodes(self) -> list[Episode]:
        cfg = self.cfg
        return select_episodes(build_dataset(cfg.dataset), cfg.episodes, int(cfg.seed))

    def meter(self, store: Store, sweep_dir: Path) -> Meter:
        """One meter for every LLM of the job: the generator's budget within the sweep's
        (``sweep.`` keys, a ledger in the store), or (a plan) the dry replay's counts."""
        from recallbench.cli.plan import plan_meter
        from recallbench.llm.budget import Budget, Meter, SweepLedger
        from recallbench.run.sweep import sweep_name

        budget = Budget.of(plain(self.cfg.generator))
        if self.launch.planning:
            return plan_meter(budget, store, sweep_name(sweep_dir))
        swept = Budget.of(plain(self.cfg.get("sweep") or {}), "sweep")
        return Meter(budget, sweep=SweepLedger(store, sweep_name(sweep_dir), swept))

    def runner(
        self, run_dir: Path, config: dict[str, JSON], meter: Meter, n_episodes: int
    ) -> Runner:
        return build_runner(self.cfg, run_dir, config, meter, n_episodes)

    def finish_plan(
        self, runner: Runner, meter: Meter, store: Store, place: JobPlace, n_episodes: int
    ) -> None:
        """A plan's end: its bill (kept under the sweep folder's ``plan/``), the cache keys it
        will have sent for the plan's next jobs, and its throw-away run folder removed."""
        from recallbench.cli.plan import DEFAULT_LATENCY_S, describe_llm, keep_planned, report_plan
        from recallbench.run.sweep import sweep_name

        llm = runner.llm
        about = f"{n_episodes} episode(s), generator {describe_llm(llm)}"
        latency = self.launch.plan_latency_s or DEFAULT_LATENCY_S
        keep = place.sweep_dir / "plan"
        report_plan(meter, self.job, about, runner.workers, llm, keep, latency)
        keep_planned(meter, store, sweep_name(place.sweep_dir))
        shutil.rmtree(place.run_dir.parent, ignore_errors=True)


def run(
    cfg: DictConfig,
    job: str,
    choices: dict[str, str] | None = None,
    overrides: list[str] | None = None,
    sweep: bool = False,
    episodes: list[Episode] | None = None,
    rerun: bool | None = None,
    launch: Launch | None = None,
) -> Path | None:
    """Run one job described by a composed config; return its run folder (None: a plan).

    ``choices`` are the config-group choices (e.g. ``{"memory": "memory_retrieval"}``); tables
    find runs by them. ``sweep``, ``episodes`` and ``rerun`` as ``run.job.run_job`` takes them.
    ``launch``: how the command was launched (None: in this process, from ``sys.argv``, not a
    plan). A run that stopped outside a sweep exits with the status it asks (75, 130, 143).
    """
    from recallbench.cli.reuse import note_job
    from recallbench.run.sources import watch

    watch()  # in a launcher's worker process too: the files it reads key its run
    launch = launch or Launch.here()
    check_run_keys(cfg)
    if not cfg.get("stamp"):  # a job run from Python is its own command: its stamp, once
        from omegaconf import open_dict

        from recallbench.run.sweep import new_stamp

        with open_dict(cfg):
            cfg.stamp = new_stamp()
    config = plain(cfg)
    config.update(job=job, choices=dict(choices or {}), overrides=list(overrides or []))
    outcome = run_job(
        config,
        job,
        HydraParts(cfg, launch, job),
        sweep=sweep,
        episodes=episodes,
        rerun=rerun,
        argv=launch.argv,
        in_worker=launch.in_worker(),
    )
    if outcome.exit_status is not None:
        sys.exit(outcome.exit_status)
    if outcome.recorded and outcome.run_dir is not None:  # a command's record names every job
        note_job(str(cfg.tag), job, outcome.run_dir, plain(cfg.dataset))
    return outcome.run_dir
