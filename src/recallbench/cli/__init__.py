"""Command line entry points; the only module that imports Hydra's runtime.

    recallbench dataset=msc memory=memory_retrieval generator=extractive
    recallbench -m experiment=theanine_table1          # a table's sweep (Hydra multirun)
    recallbench-table theanine_table1 [--results DIR] [KEY=VALUE ...]   # its table
    recallbench human-eval export|import carecall_table5 ...            # a human study
    recallbench view results/runs/<tag>/<stamp>[/<job>] [--compare RUN]  # an HTML report
    recallbench judge-panel results/runs/<tag>/<stamp>/<job> [--judge SPEC ...]  # judge robustness
    recallbench reproduce reproduce-table-lufy-3 [--gen ...] [--args ...]  # make's pattern rule

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
from recallbench.cli.table import render_table, table_main, table_services
from recallbench.cli.view import view_main
from recallbench.errors import ConfigError, EndpointDown

__all__ = [
    "EXIT_USER_ERROR",
    "RunKeys",
    "check_choices",
    "check_resume_dir",
    "check_run_keys",
    "compose_job",
    "default_job",
    "main",
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
}  # `recallbench <subcommand> ...`
ARGV_ENV = "RECALLBENCH_ARGV"  # the command line, for resume commands printed by jobs in workers


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
    from recallbench.cli.plan import describe_llm, plan_meter, planning, report_plan
    from recallbench.cli.reuse import note_job, reused_run
    from recallbench.llm.budget import Budget, BudgetExceeded, Meter
    from recallbench.llm.lm_scores import use_score_cache
    from recallbench.metrics.cache import use_metric_cache
    from recallbench.run.provenance import describe_code
    from recallbench.run.record import HealthPolicy, RunInterrupted, describe_problems
    from recallbench.run.report import print_end_of_run
    from recallbench.run.runner import Runner, default_stamp
    from recallbench.run.tracking import WandbLogger

    check_run_keys(cfg)
    check_resume_dir(cfg.resume_dir, sweep)
    paths = cfg.paths
    if episodes is None:
        episodes = build_dataset(cfg.dataset)
        episodes = select_episodes(episodes, cfg.episodes, int(cfg.seed))
    config = plain(cfg)
    config["job"] = job
    config["choices"] = dict(choices or {})
    config["overrides"] = list(overrides or [])
    if not (planning() or cfg.resume_dir) and (
        done := reused_run(cfg, job, config, episodes, rerun)
    ):
        return done
    # one meter for every LLM of the job: the budget, or (plan=true) the dry replay's counts
    budget = Budget.of(plain(cfg.generator))
    meter = plan_meter(budget) if planning() else Meter(budget)
    use_score_cache(Path(paths.cache_dir) / "lm_scores.sqlite")  # LUFY's P, PPL metrics
    use_metric_cache(Path(paths.cache_dir) / "metric_results.sqlite")  # MAUVE, BERTScore, PPL
    llm = build_generator(cfg.generator, Path(paths.cache_dir) / "llm.sqlite", meter=meter)
    embedder = build_embedder(cfg.embedder, paths.cache_dir)
    protocol = build_protocol(cfg.protocol, int(cfg.seed), llm, embedder, paths.cache_dir)
    metrics = list(cfg.metrics.names or cfg.protocol.get("metrics") or [])
    if meter.dry:  # a plan: a throw-away folder, no metrics (no LLM in them), no tracking
        import tempfile

        run_dir, metrics = Path(tempfile.mkdtemp(prefix="recallbench-plan-run-")) / job, []
    elif cfg.resume_dir:
        run_dir = Path(cfg.resume_dir) / job if sweep else Path(cfg.resume_dir)
    else:
        run_dir = Path(paths.results_dir) / "runs" / cfg.tag / default_stamp() / job
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
    try:
        runner.run(episodes)
    except BudgetExceeded as stop:
        print(
            f"recallbench: stopped by the budget: {stop.reason}, after "
            f"{runner.info.get('episodes_done', 0)}/{len(episodes)} episodes (run.json: "
            f"interrupted); raise it and resume with: {resume_command(run_dir, sweep)}",
            file=sys.stderr,
            flush=True,
        )
        sys.exit(stop.exit_status)
    except RunInterrupted as stop:
        info = runner.info
        print(
            f"recallbench: {stop} after {info.get('episodes_done', 0)}/{len(episodes)} episodes "
            f"(run.json: interrupted); resume with: {resume_command(run_dir, sweep)}",
            file=sys.stderr,
            flush=True,
        )
        sys.exit(stop.exit_status)
    except EndpointDown as exc:
        raise EndpointDown(f"{exc}; resume with: {resume_command(run_dir, sweep)}") from None
    if meter.dry:
        import shutil

        about = f"{len(episodes)} episode(s), generator {describe_llm(llm)}"
        keep = Path(paths.results_dir) / "plans" / default_stamp()
        report_plan(meter, job, about, runner.workers, llm, keep)
        shutil.rmtree(run_dir.parent, ignore_errors=True)
        return None
    if runner.already_finished:
        print(
            f"recallbench: {run_dir} already {runner.info.get('status')}: nothing to run or "
            "score (a new run: drop resume_dir)",
            file=sys.stderr,
            flush=True,
        )
        note_job(str(cfg.tag), job, run_dir, plain(cfg.dataset))  # a record names every job
        return run_dir
    if runner.info.get("status") == "degraded":
        print(
            f"recallbench: warning: run degraded ({describe_problems(runner.info['health'])}); "
            f"samples of unparsed replies in {run_dir / 'usage.json'}",
            file=sys.stderr,
            flush=True,
        )
    print_end_of_run(run_dir)
    note_job(str(cfg.tag), job, run_dir, plain(cfg.dataset))
    if runner.info.get("git_dirty"):
        print(
            f"recallbench: warning: code {describe_code(runner.info)}: this run is not "
            "reproducible from its commit alone (run.json: git_dirty, git_diff_sha256)",
            file=sys.stderr,
            flush=True,
        )
    return run_dir


def resume_command(run_dir: Path, sweep: bool = False) -> str:
    """The command line that resumes ``run_dir``: this command's overrides + ``resume_dir=``;
    for a job of a sweep, ``-m`` and the sweep's folder (its finished jobs are skipped)."""
    import shlex

    given = os.environ.get(ARGV_ENV)
    argv = shlex.split(given) if given is not None else sys.argv[1:]
    args = [a for a in argv if not a.startswith("resume_dir=") and a not in ("-m", "--multirun")]
    target = run_dir.parent if sweep else run_dir
    return shlex.join(["recallbench", *(["-m"] if sweep else []), *args, f"resume_dir={target}"])


def main() -> None:
    """Console entry point: the Hydra app for runs, or ``recallbench <subcommand> ...``
    (``table``, ``view``, ``human-eval``, ``judge-panel``, ``reproduce``)."""
    if (command := SUBCOMMANDS.get(sys.argv[1] if len(sys.argv) > 1 else "")) is not None:
        command(sys.argv[2:])
        return
    from recallbench.cli.plan import (
        PLAN_DIR_ENV,
        PLAN_ENV,
        planning,
        print_plan_total,
        take_plan_args,
    )
    from recallbench.cli.reuse import record_command, replayed, start_command

    register_help_resolver()  # `--help` lists config choices through it (cli/help.py)
    sys.argv = take_verbose_flag(sys.argv)
    with user_errors():
        sys.argv = take_plan_args(sys.argv)
    if replayed(sys.argv[1:]):  # this command finished before: its runs, at once
        return
    start_command()
    with user_errors():
        check_choices(sys.argv[1:])
        check_command_line(sys.argv[1:])
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

    # One stamp per invocation: every job of a sweep (sequential, joblib or SLURM workers, which
    # inherit the environment) lands under ONE folder runs/<tag>/<stamp>/.
    os.environ.setdefault("RECALLBENCH_STAMP", time.strftime("%Y%m%d-%H%M%S"))
    os.environ[SWEPT_ENV] = ",".join(swept_keys(sys.argv[1:]))
    os.environ[ARGV_ENV] = shlex.join(sys.argv[1:])
    try:
        _app()
        print_plan_total()
        if not planning():  # the next identical command returns these runs at once
            record_command(sys.argv[1:])
    finally:
        os.environ.pop(PLAN_ENV, None)
        os.environ.pop(PLAN_DIR_ENV, None)
