"""Command line entry points; the only module that imports Hydra's runtime.

    recallbench dataset=msc memory=memory_retrieval generator=extractive
    recallbench -m experiment=theanine_table1          # a table's sweep (Hydra multirun)
    recallbench-table theanine_table1 [--results DIR] [KEY=VALUE ...]   # its table
    recallbench human-eval export|import carecall_table5 ...            # a human study
    recallbench view results/runs/<tag>/<stamp>[/<job>] [--compare RUN]  # an HTML report
    recallbench judge-panel results/runs/<tag>/<stamp>/<job> [--judge SPEC ...]  # judge robustness
    recallbench import-answers FILE --format zep --name zep  # a published answer file as a run
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
from collections.abc import Callable
from typing import cast

# Before anything imports torch: OpenMP threads that wait for work sleep instead of spinning.
# On this 2-core machine shared with other processes, spinning threads fight for the cores:
# SmolLM2 scored 15-17 tokens/s with 2 spinning threads at load ~12 against 38-69 with passive
# ones (and 30 with one thread). Set OMP_WAIT_POLICY yourself to choose otherwise.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from omegaconf import DictConfig

from recallbench import CONF_DIR, CONFIG_NAME
from recallbench.cli.cache import cache_main
from recallbench.cli.checks import check_command_line
from recallbench.cli.config import (
    EXIT_USER_ERROR,
    RunKeys,
    check_choices,
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
from recallbench.cli.import_answers import import_main
from recallbench.cli.job import run
from recallbench.cli.judge_panel import judge_panel_main
from recallbench.cli.launch import Launch
from recallbench.cli.reproduce import reproduce_main
from recallbench.cli.sweep import status_main, sweep_exit
from recallbench.cli.table import render_table, table_main, table_services
from recallbench.cli.view import view_main
from recallbench.errors import ConfigError
from recallbench.run.job import settled_job
from recallbench.run.places import check_resume_dir
from recallbench.run.sweep import new_stamp, resume_command

__all__ = [
    "EXIT_USER_ERROR",
    "Launch",
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
    "import-answers": import_main,
    "reproduce": reproduce_main,
    "status": status_main,
    "cache": cache_main,
}  # `recallbench <subcommand> ...`


def main() -> None:
    """Console entry point: the Hydra app for runs, or ``recallbench <subcommand> ...``
    (``table``, ``view``, ``human-eval``, ``judge-panel``, ``reproduce``, ``status``,
    ``cache``)."""
    from recallbench.run.sources import watch

    watch()  # note the files this command reads: what its runs and tables are keyed on
    if (command := SUBCOMMANDS.get(sys.argv[1] if len(sys.argv) > 1 else "")) is not None:
        command(sys.argv[2:])
        return
    from recallbench.cli.plan import print_plan_total, take_plan_args
    from recallbench.cli.reuse import record_command, replayed

    register_help_resolver()  # `--help` lists config choices through it (cli/help.py)
    retry = shlex.join(["recallbench", *sys.argv[1:]])  # as typed: what a failed check repeats
    sys.argv = take_verbose_flag(sys.argv)
    started = time.time()
    # One stamp per invocation, chosen here once: every job of a sweep (sequential, joblib or
    # SLURM workers) lands under ONE folder runs/<tag>/<stamp>/, the one the checks made sure
    # of and the one whose sweep.json the exit code reads. It reaches the checks and each job
    # explicitly, as the config key `stamp` (in the job's pickled config).
    stamp = new_stamp()
    with user_errors():
        sys.argv, latency = take_plan_args(sys.argv)
    args = sys.argv[1:]  # the command as typed (before the stamp below): its reuse key
    if replayed(args, planning=latency is not None):  # finished before: its runs, at once
        return
    if not any(a.startswith("stamp=") for a in args):
        sys.argv.append(f"stamp={stamp}")
    with user_errors():
        check_choices(args)
        folders = check_command_line(sys.argv[1:], retry)  # every job as it will run
    launch = Launch(
        argv=tuple(args),
        swept=frozenset(swept_keys(args)),
        main_pid=os.getpid(),
        plan_latency_s=latency,
        plan_dirs=tuple(f / "plan" for f in folders),
    )
    app(launch)()
    if launch.planning:
        print_plan_total(launch.plan_dirs, started)
    sweep_exit(folders, started, args)
    record_command(args, planning=launch.planning)  # the next identical command: at once


def app(launch: Launch) -> Callable[[], None]:
    """The Hydra app that runs every job of a command; it closes over ``launch``, so jobs in
    joblib or submitit workers (which receive it pickled) know how they were launched."""
    import hydra
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from recallbench.tables import table_only

    @hydra.main(config_path=str(CONF_DIR), config_name=CONFIG_NAME, version_base="1.3")
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
            job = cfg.job or default_job(cfg, choices, overrides if multirun else [], launch.swept)
            folder = None  # a job of a sweep that failed or stopped: recorded, not raised
            with settled_job(cfg, job, multirun, launch.in_worker()):
                folder = run(
                    cfg, job, picked_choices(choices), overrides, sweep=multirun, launch=launch
                )
            if folder is not None and not (sys.stdout.isatty() and sys.stderr.isatty()):
                print(folder)  # for scripts; a terminal shows it once (a plan prints its bill)

    # hydra.main returns Any: the app it makes is called with no arguments
    return cast("Callable[[], None]", _app)
