"""One job of a command, split by what it does: its folders, its meter, its runner, the run with
its stop messages, and its end (a plan's bill, the end-of-run lines).

``run`` is the entry (``cli.main`` calls it for every job of a sweep, ``recallbench matrix`` for
every cell); each step is a function that takes what it needs as arguments: the composed config,
the job's name, and how the command was launched (``cli.launch.Launch``: the command line as
typed, plan mode, the submitting process).
"""

from __future__ import annotations

import os
import platform
import shutil
import sys
import tempfile
from collections.abc import Sequence
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
    plain,
)
from recallbench.cli.config import (
    check_resume_dir,
    check_run_keys,
    resolve_workers,
    select_episodes,
)
from recallbench.cli.launch import Launch
from recallbench.cli.sweep import report_done, report_stop, resume_command
from recallbench.errors import EndpointDown, RunStopped
from recallbench.records import JSON, Episode

if TYPE_CHECKING:
    from recallbench.llm.budget import Meter
    from recallbench.run.runner import Runner
    from recallbench.store import Store

__all__ = ["JobPlace", "build_runner", "job_meter", "job_place", "run", "run_guarded"]


@dataclass(frozen=True)
class JobPlace:
    """Where a job writes: its sweep folder ``runs/<tag>/<stamp>`` and its run folder."""

    sweep_dir: Path
    run_dir: Path
    sweep: bool


def job_place(cfg: DictConfig, job: str, sweep: bool) -> JobPlace:
    """The job's folders: ``<sweep folder>/<job>``, or ``resume_dir`` for a resumed single run
    (a resumed sweep's ``resume_dir`` is its sweep folder)."""
    from recallbench.cli.sweep import sweep_folder

    check_resume_dir(cfg.resume_dir, sweep)
    sweep_dir = sweep_folder(cfg, sweep)
    run_dir = Path(cfg.resume_dir) if cfg.resume_dir and not sweep else sweep_dir / job
    return JobPlace(sweep_dir, run_dir, sweep)


def job_meter(cfg: DictConfig, store: Store, sweep_dir: Path, launch: Launch) -> Meter:
    """One meter for every LLM of the job: the generator's budget within the sweep's (``sweep.``
    keys, a ledger in the store), or (a plan) the dry replay's counts."""
    from recallbench.cli.plan import plan_meter
    from recallbench.llm.budget import Budget, Meter, SweepLedger
    from recallbench.run.sweep import sweep_name

    budget = Budget.of(plain(cfg.generator))
    if launch.planning:
        return plan_meter(budget, store, sweep_name(sweep_dir))
    swept = Budget.of(plain(cfg.get("sweep") or {}), "sweep")
    return Meter(budget, sweep=SweepLedger(store, sweep_name(sweep_dir), swept))


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
    metrics = [] if meter.dry else list(cfg.metrics.names or cfg.protocol.get("metrics") or [])
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


def run_guarded(
    runner: Runner, place: JobPlace, job: str, episodes: Sequence[Episode], launch: Launch
) -> bool:
    """Run the episodes; a clean stop prints why and how to resume. False: a job of a sweep (or
    in a worker) that stopped: the sweep's other jobs go on and the submitting process exits
    with the worst outcome once every job ended (``sweep_exit``). A stop signal in this process
    ends the sweep at once (the user asked)."""
    from recallbench.llm.budget import BudgetExceeded
    from recallbench.run.record import RunInterrupted
    from recallbench.run.sweep import record_end

    run_dir, sweep, dry = place.run_dir, place.sweep, runner.llm.meter.dry
    try:
        runner.run(episodes)
    except RunStopped as stop:  # a budget, or the store went away (StoreLost)
        budget = isinstance(stop, BudgetExceeded)
        why = f"stopped by the budget: {stop.reason}" if budget else f"stopped: {stop.reason}"
        then = "raise it and resume" if budget else "once it answers, resume"
        report_stop(runner, run_dir, sweep, job, why, then, len(episodes), launch.argv)
        if launch.in_worker() or sweep:
            return False
        sys.exit(stop.exit_status)
    except RunInterrupted as stop:
        report_stop(runner, run_dir, sweep, job, str(stop), "resume", len(episodes), launch.argv)
        if launch.in_worker():
            return False
        sys.exit(stop.exit_status)
    except EndpointDown as exc:
        record_end(runner.log, run_dir, place.sweep_dir, job)
        resume = resume_command(run_dir, sweep, launch.argv)
        raise EndpointDown(f"{exc}; resume with: {resume}") from None
    except BaseException:
        if not dry:
            record_end(runner.log, run_dir, place.sweep_dir, job)
        raise
    if not dry:
        record_end(runner.log, run_dir, place.sweep_dir, job)
    return True


def finish_plan(
    runner: Runner, meter: Meter, store: Store, place: JobPlace, job: str, n: int, launch: Launch
) -> None:
    """A plan's end: its bill (kept under the sweep folder's ``plan/``), the cache keys it will
    have sent for the plan's next jobs, and its throw-away run folder removed."""
    from recallbench.cli.plan import DEFAULT_LATENCY_S, describe_llm, keep_planned, report_plan
    from recallbench.run.sweep import sweep_name

    llm = runner.llm
    about = f"{n} episode(s), generator {describe_llm(llm)}"
    latency = launch.plan_latency_s or DEFAULT_LATENCY_S
    report_plan(meter, job, about, runner.workers, llm, place.sweep_dir / "plan", latency)
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
    find runs by them. ``sweep``: the job belongs to a multirun, so a ``resume_dir`` names the
    sweep's folder and the job resumes (or starts) in ``<resume_dir>/<job>``. A run folder that
    already finished (same config and data) is not run again: a line says so. ``episodes``:
    the dataset already loaded and sampled (``recallbench matrix`` loads each dataset once for
    all its methods); None loads ``cfg.dataset`` and samples ``cfg.episodes``. A new run
    (no ``resume_dir``) whose job's newest finished run has the same config, code, packages and
    data returns that run's folder instead (``run.resume.reusable_run``) unless ``rerun`` (None:
    ``RECALLBENCH_RERUN``, which ``make ... RERUN=1`` sets). ``launch``: how the command was
    launched (None: in this process, from ``sys.argv``, not a plan).
    """
    from recallbench.cli.ledger import release_on_resume
    from recallbench.cli.reuse import note_job, reused_run
    from recallbench.cli.sweep import job_store
    from recallbench.llm.budget import Budget
    from recallbench.run.sources import watch
    from recallbench.run.sweep import record_job

    watch()  # in a launcher's worker process too: the files it reads key its run
    launch = launch or Launch.here()
    check_run_keys(cfg)
    place = job_place(cfg, job, sweep)
    with job_store(cfg) as store:
        if episodes is None:
            episodes = select_episodes(build_dataset(cfg.dataset), cfg.episodes, int(cfg.seed))
        config = plain(cfg)
        config.update(job=job, choices=dict(choices or {}), overrides=list(overrides or []))
        if not (launch.planning or cfg.resume_dir) and (
            done := reused_run(cfg, job, config, episodes, rerun)
        ):
            return done
        if cfg.resume_dir and not launch.planning:
            release_on_resume(store, place.sweep_dir)  # what a killed attempt never settled
        meter = job_meter(cfg, store, place.sweep_dir, launch)
        if meter.dry:  # a plan: a throw-away folder
            dry_dir = Path(tempfile.mkdtemp(prefix="recallbench-plan-run-")) / job
            place = JobPlace(place.sweep_dir, dry_dir, sweep)
        runner = build_runner(cfg, place.run_dir, config, meter, len(episodes))
        if not meter.dry:
            swept = Budget.of(plain(cfg.get("sweep") or {}), "sweep")
            record_job(
                place.sweep_dir,
                job,
                status="running",
                host=platform.node(),
                pid=os.getpid(),
                budget={"max_usd": swept.max_usd, "max_calls": swept.max_calls},
                store=store.url if store.server else "sqlite",
                ledger=store.url,  # where `recallbench status` reads the sweep's ledger
                resume=resume_command(place.run_dir, sweep, launch.argv),
            )
        if not run_guarded(runner, place, job, episodes, launch):
            return place.run_dir
        if meter.dry:
            finish_plan(runner, meter, store, place, job, len(episodes), launch)
            return None
        if not runner.already_finished:
            report_done(runner, place.run_dir)
        else:
            print(
                f"recallbench: {place.run_dir} already {runner.log.status}: nothing to "
                "run or score (a new run: drop resume_dir)",
                file=sys.stderr,
                flush=True,
            )
        note_job(str(cfg.tag), job, place.run_dir, plain(cfg.dataset))  # a record names every job
        return place.run_dir
