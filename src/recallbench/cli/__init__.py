"""Command line entry points; the only module that imports Hydra's runtime.

    recallbench dataset=msc memory=memory_retrieval generator=extractive
    recallbench -m experiment=theanine_table1          # a table's sweep (Hydra multirun)
    recallbench-table theanine_table1 [--results DIR] [KEY=VALUE ...]   # its table
    recallbench human-eval export|import carecall_table5 ...            # a human study
    recallbench view results/runs/<tag>/<stamp>[/<job>] [--compare RUN]  # an HTML report
    recallbench judge-panel results/runs/<tag>/<stamp>/<job> [--judge SPEC ...]  # judge robustness
    recallbench reproduce reproduce-table-lufy-3 [--gen ...] [--args ...]  # make's pattern rule
    recallbench status results/runs/<tag>/<stamp>                        # a sweep's jobs and spend
    recallbench cache import|export results/cache --store redis://host:6379/0  # seed a server

``cli`` resolves the config, builds plain objects (episodes, LLM, embedder, memory factory,
protocol) and hands them to ``Runner``, or the model factories a table builder needs to
``recallbench.tables.reproduce``; everything below receives plain values and objects.
``python -m recallbench.cli table ...`` is ``recallbench-table ...`` (the Makefile's spelling,
which works from a source checkout whose console scripts are not reinstalled); ``recallbench
table ...`` and ``recallbench view ...`` (``recallbench-view``) dispatch the same way.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from pathlib import Path

# Before anything imports torch: OpenMP threads that wait for work sleep instead of spinning.
# On this 2-core machine shared with other processes, spinning threads fight for the cores:
# SmolLM2 scored 15-17 tokens/s with 2 spinning threads at load ~12 against 38-69 with passive
# ones (and 30 with one thread). Set OMP_WAIT_POLICY yourself to choose otherwise.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from omegaconf import DictConfig

from recallbench import CONF_DIR
from recallbench.cli.build import (
    build_dataset,
    build_embedder,
    build_generator,
    build_memory_factory,
    build_protocol,
    plain,
)
from recallbench.cli.cache import cache_main
from recallbench.cli.checks import check_command_line
from recallbench.cli.config import (
    EXIT_USER_ERROR,
    SWEPT_ENV,
    RunKeys,
    check_choices,
    check_resume_dir,
    check_run_keys,
    compose_job,
    default_job,
    picked_choices,
    resolve_workers,
    select_episodes,
    swept_keys,
    take_verbose_flag,
    user_errors,
    verbose_errors,
)
from recallbench.cli.help import register_help_resolver
from recallbench.cli.human_eval import human_eval_main
from recallbench.cli.judge_panel import judge_panel_main
from recallbench.cli.reproduce import reproduce_main
from recallbench.cli.sweep import (
    ARGV_ENV,
    MAIN_PID_ENV,
    STAMP_ENV,
    in_worker,
    report_done,
    report_stop,
    resume_command,
    status_main,
    sweep_exit,
)
from recallbench.cli.table import render_table, table_main, table_services
from recallbench.cli.view import view_main
from recallbench.errors import ConfigError, EndpointDown, RunStopped

__all__ = [
    "EXIT_USER_ERROR",
    "RunKeys",
    "check_choices",
    "check_resume_dir",
    "check_run_keys",
    "compose_job",
    "default_job",
    "main",
    "resume_command",
    "human_eval_main",
    "judge_panel_main",
    "render_table",
    "resolve_workers",
    "run",
    "select_episodes",
    "table_main",
    "table_services",
    "user_errors",
    "verbose_errors",
    "view_main",
]
SUBCOMMANDS = {
    "table": table_main,
    "view": view_main,
    "human-eval": human_eval_main,
    "judge-panel": judge_panel_main,
    "reproduce": reproduce_main,
    "status": status_main,
    "cache": cache_main,
}  # `recallbench <subcommand> ...`


def run(
    cfg: DictConfig,
    job: str,
    choices: dict[str, str] | None = None,
    overrides: list[str] | None = None,
    sweep: bool = False,
    episodes: list | None = None,
    rerun: bool | None = None,
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
    ``RECALLBENCH_RERUN``, which ``make ... RERUN=1`` sets).
    """
    import platform

    from recallbench.cli.plan import describe_llm, plan_meter, planning
    from recallbench.cli.reuse import note_job, reused_run
    from recallbench.cli.sweep import job_store, sweep_folder
    from recallbench.llm.budget import Budget, BudgetExceeded, Meter, SweepLedger
    from recallbench.llm.lm_scores import use_score_cache
    from recallbench.metrics.cache import use_metric_cache
    from recallbench.run.record import HealthPolicy, RunInterrupted
    from recallbench.run.runner import Runner
    from recallbench.run.sweep import record_end, record_job, sweep_name
    from recallbench.run.tracking import WandbLogger

    check_run_keys(cfg)
    check_resume_dir(cfg.resume_dir, sweep)
    paths = cfg.paths
    sweep_dir = sweep_folder(cfg, sweep)
    run_dir = Path(cfg.resume_dir) if cfg.resume_dir and not sweep else sweep_dir / job
    with job_store(cfg) as store:
        if episodes is None:
            episodes = build_dataset(cfg.dataset)
            episodes = select_episodes(episodes, cfg.episodes, int(cfg.seed))
        config = plain(cfg)
        config.update(job=job, choices=dict(choices or {}), overrides=list(overrides or []))
        if not (planning() or cfg.resume_dir) and (
            done := reused_run(cfg, job, config, episodes, rerun)
        ):
            return done
        # one meter for every LLM of the job: the budget, or (plan=true) the dry replay's counts
        budget = Budget.of(plain(cfg.generator))
        swept = Budget.of(plain(cfg.get("sweep") or {}), "sweep")
        ledger = SweepLedger(store, sweep_name(sweep_dir), swept)
        meter = (
            plan_meter(budget, store, sweep_name(sweep_dir))
            if planning()
            else Meter(budget, sweep=ledger)
        )
        use_score_cache(Path(paths.cache_dir) / "lm_scores.sqlite")  # LUFY's P, PPL metrics
        cache_dir = Path(paths.cache_dir)  # MAUVE, BERTScore, PPL results; MAUVE's features
        use_metric_cache(cache_dir / "metric_results.sqlite", cache_dir / "embeddings.sqlite")
        llm = build_generator(cfg.generator, Path(paths.cache_dir) / "llm.sqlite", meter=meter)
        embedder = build_embedder(cfg.embedder, paths.cache_dir)
        protocol = build_protocol(cfg.protocol, int(cfg.seed), llm, embedder, paths.cache_dir)
        metrics = list(cfg.metrics.names or cfg.protocol.get("metrics") or [])
        if meter.dry:  # a plan: a throw-away folder, no metrics (no LLM in them), no tracking
            import tempfile

            run_dir, metrics = Path(tempfile.mkdtemp(prefix="recallbench-plan-run-")) / job, []
        health = HealthPolicy.from_config(config.get("health"))
        llm.breaker.after = health.breaker_after
        runner = Runner(
            run_dir,
            protocol=protocol,
            make_method=build_memory_factory(cfg.memory, llm, embedder),
            llm=llm,
            metrics=metrics,
            config=config,
            progress=bool(cfg.progress),
            logger=None
            if meter.dry
            else WandbLogger(
                cfg.wandb.project,
                cfg.wandb.mode,
                tags=[cfg.tag],
                verbose=bool(cfg.wandb.get("verbose", False)),
            ),
            health=health,
            workers=resolve_workers(cfg.get("workers", "auto"), llm, len(episodes)),
        )
        if not meter.dry:
            record_job(
                sweep_dir,
                job,
                status="running",
                host=platform.node(),
                pid=os.getpid(),
                budget={"max_usd": swept.max_usd, "max_calls": swept.max_calls},
                store=store.url if store.server else "sqlite",
                resume=resume_command(run_dir, sweep),
            )
        try:
            runner.run(episodes)
        except RunStopped as stop:  # a budget, or the store went away (StoreLost)
            budget_stop = isinstance(stop, BudgetExceeded)
            why = (
                f"stopped by the budget: {stop.reason}"
                if budget_stop
                else f"stopped: {stop.reason}"
            )
            then = "raise it and resume" if budget_stop else "once it answers, resume"
            report_stop(runner, run_dir, sweep, job, why, then, len(episodes))
            if in_worker():  # the submitting process exits 75 once every job ended (sweep_exit)
                return run_dir
            sys.exit(stop.exit_status)
        except RunInterrupted as stop:
            report_stop(runner, run_dir, sweep, job, str(stop), "resume", len(episodes))
            sys.exit(stop.exit_status)
        except EndpointDown as exc:
            record_end(runner.info, run_dir, sweep_dir, job)
            raise EndpointDown(f"{exc}; resume with: {resume_command(run_dir, sweep)}") from None
        except BaseException:
            if not meter.dry:
                record_end(runner.info, run_dir, sweep_dir, job)
            raise
        if not meter.dry:
            record_end(runner.info, run_dir, sweep_dir, job)
        if meter.dry:
            import shutil

            from recallbench.cli.plan import keep_planned, report_plan

            about = f"{len(episodes)} episode(s), generator {describe_llm(llm)}"
            report_plan(meter, job, about, runner.workers, llm, sweep_dir / "plan")
            keep_planned(meter, store, sweep_name(sweep_dir))
            shutil.rmtree(run_dir.parent, ignore_errors=True)
            return None
        if not runner.already_finished:
            report_done(runner, run_dir)
        else:
            print(
                f"recallbench: {run_dir} already {runner.info.get('status')}: nothing to run or "
                "score (a new run: drop resume_dir)",
                file=sys.stderr,
                flush=True,
            )
        note_job(str(cfg.tag), job, run_dir, plain(cfg.dataset))  # a record names every job
        return run_dir


def main() -> None:
    """Console entry point: the Hydra app for runs, or ``recallbench <subcommand> ...``
    (``table``, ``view``, ``human-eval``, ``judge-panel``, ``reproduce``, ``status``,
    ``cache``)."""
    if (command := SUBCOMMANDS.get(sys.argv[1] if len(sys.argv) > 1 else "")) is not None:
        command(sys.argv[2:])
        return
    import hydra
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from recallbench.tables import table_only

    @hydra.main(config_path=str(CONF_DIR), config_name="config", version_base="1.3")
    def _app(cfg: DictConfig) -> None:
        with user_errors():
            hc = HydraConfig.get()
            choices = hc.runtime.choices
            if reason := table_only(choices.get("experiment"), cfg.get("table")):
                raise ConfigError(reason)
            if cfg.get("matrix") is not None:  # conf/experiment/matrix.yaml: not one sweep
                raise ConfigError(
                    f"experiment {choices.get('experiment')} is a matrix of settings, not a "
                    "sweep: run it with `python -m recallbench.cli.matrix` (make matrix)"
                )
            overrides = list(hc.overrides.task)
            multirun = hc.mode == RunMode.MULTIRUN
            job = cfg.job or default_job(cfg, choices, overrides if multirun else [])
            folder = run(cfg, job, picked_choices(choices), overrides, sweep=multirun)
            if folder is not None and not (sys.stdout.isatty() and sys.stderr.isatty()):
                print(folder)  # for scripts; a terminal shows it once (a plan prints its bill)

    from recallbench.cli.plan import PLAN_DIR_ENV, PLAN_ENV, print_plan_total, take_plan_args
    from recallbench.cli.reuse import record_command, replayed

    register_help_resolver()  # `--help` lists config choices through it (cli/help.py)
    sys.argv = take_verbose_flag(sys.argv)
    started = time.time()
    # One stamp per invocation: every job of a sweep (sequential, joblib or SLURM workers) lands
    # under ONE folder runs/<tag>/<stamp>/. It reaches each job explicitly, as the config key
    # `stamp` (in the job's pickled config), not only through the inherited environment.
    stamp = os.environ.setdefault(STAMP_ENV, time.strftime("%Y%m%d-%H%M%S"))
    with user_errors():
        sys.argv = take_plan_args(sys.argv)
    args = sys.argv[1:]  # the command as typed (before the stamp below): its reuse key
    if replayed(args):  # this command finished before: its runs, at once
        return
    with user_errors():
        check_choices(args)
        folders = check_command_line(args)
    os.environ[SWEPT_ENV] = ",".join(swept_keys(sys.argv[1:]))
    os.environ[ARGV_ENV] = shlex.join(sys.argv[1:])
    os.environ[PLAN_DIR_ENV] = os.pathsep.join(str(f / "plan") for f in folders)
    os.environ[MAIN_PID_ENV] = str(os.getpid())
    if not any(a.startswith("stamp=") for a in sys.argv[1:]):
        sys.argv.append(f"stamp={stamp}")
    try:
        _app()
        print_plan_total(started)
        sweep_exit(folders, started)
        record_command(args)  # the next identical command returns these runs at once
    finally:
        for key in (PLAN_ENV, PLAN_DIR_ENV, MAIN_PID_ENV):
            os.environ.pop(key, None)
