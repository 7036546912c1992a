"""A job's lifecycle: ``run_job(config, job, parts)``, what ``recallbench``, ``recallbench
matrix``, ``import-answers`` and a notebook call to run one job (Inspect's ``eval``).

The steps, in order (each a function of this module or of ``run.sweep``)::

    place = job_place(config, job, sweep)     # its folders: <results>/runs/<tag>/<stamp>/<job>
    with job_store(config) as store:          # the process's shared store until the job ends
        episodes = parts.episodes()           # unless given (the matrix loads them once)
        reusable_run(...)                     # a new run whose newest finished run matches
        release_on_resume(store, sweep_dir)   # a resume gives back what gone holders reserved
        meter = parts.meter(store, sweep_dir) # the job's budget inside the sweep's ledger
        runner = parts.runner(run_dir, ...)   # its models and its Runner
        record_job(running, resume command)   # sweep.json
        runner.run(episodes)                  # stops: the line that says why and how to resume
        record_end(runner.log, ...)           # sweep.json: status, attempt, requests, dollars
    -> JobOutcome                              # the folder, how it ended, the exit a stop asks

What the run layer cannot make itself comes in ``parts`` (``JobParts``, dependency injection):
the episodes, the meter and the runner are built from the config by ``cli`` (Hydra's
``instantiate`` stays in ``cli/build.py``, the one module that builds models), and a plan's
bill is ``cli/plan.py``'s. The job's lines (a stop, a reuse, the end-of-run summary) go to
``say`` (stderr by default); the process's exit is the caller's (``JobOutcome.exit_status``).
"""

from __future__ import annotations

import contextlib
import os
import platform
import tempfile
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from recallbench.errors import EndpointDown, RunStopped
from recallbench.records import JSON, Episode
from recallbench.run.places import JobPlace, job_place, job_store
from recallbench.run.report import report_done, say_stderr
from recallbench.run.resume import rerun_asked, reusable_run, run_identity
from recallbench.run.sweep import record_end, record_job, resume_command, sweep_folder

if TYPE_CHECKING:
    from recallbench.llm.budget import Meter
    from recallbench.run.runner import Runner
    from recallbench.store import Store

__all__ = [
    "REUSED",
    "JobOutcome",
    "JobParts",
    "finished_before",
    "report_stop",
    "run_job",
    "settled_job",
]

REUSED = "finished with the same config, code, packages and data; RERUN=1 runs it again"


class JobParts(Protocol):
    """What ``run_job`` needs built from the config (``cli.job.HydraParts`` builds it)."""

    @property
    def planning(self) -> bool:
        """A dry replay that prices the job (``plan=true``): nothing is sent."""
        ...

    def episodes(self) -> list[Episode]:
        """The job's episodes: its dataset loaded and sampled."""
        ...

    def meter(self, store: Store, sweep_dir: Path) -> Meter:
        """One meter for every LLM of the job (the budget inside the sweep's ledger)."""
        ...

    def runner(
        self, run_dir: Path, config: dict[str, JSON], meter: Meter, n_episodes: int
    ) -> Runner:
        """The job's models and its ``Runner`` writing into ``run_dir``."""
        ...

    def finish_plan(
        self, runner: Runner, meter: Meter, store: Store, place: JobPlace, n_episodes: int
    ) -> None:
        """A plan's end: its bill, and its throw-away run folder removed."""
        ...


@dataclass(frozen=True)
class JobOutcome:
    """How a job ended: its run folder (None: a plan), what happened, and for a run that
    stopped outside a sweep the exit its process owes (75, or 128 + the signal)."""

    run_dir: Path | None
    ended: str  # ran, reused, already (finished before in this folder), stopped, planned
    exit_status: int | None = None

    @property
    def recorded(self) -> bool:
        """Does a command's record name this job (it finished or was reused)?"""
        return self.ended in ("ran", "reused", "already")


def run_job(
    config: dict[str, JSON],
    job: str,
    parts: JobParts,
    *,
    sweep: bool = False,
    episodes: list[Episode] | None = None,
    rerun: bool | None = None,
    argv: Sequence[str] | None = None,
    in_worker: bool = False,
    say: Callable[[str], None] = say_stderr,
) -> JobOutcome:
    """Run one job of the resolved ``config`` (its ``job``, ``choices`` and ``overrides`` set);
    see the module docstring for the steps.

    ``sweep``: the job belongs to a multirun (a ``resume_dir`` names the sweep's folder).
    ``episodes``: already loaded and sampled (None: ``parts.episodes()``). A new run (no
    ``resume_dir``) whose newest finished run has the same config, code, packages and data
    returns that run's folder (``run.resume.reusable_run``) unless ``rerun`` (None:
    ``RECALLBENCH_RERUN``). ``argv``: the command as typed, for the resume command (None: this
    process's). ``in_worker``: the job runs in a launcher's worker, whose stop is recorded and
    returned rather than exited.
    """
    from recallbench.run.ledger import release_on_resume

    place = job_place(config, job, sweep)
    with job_store(config, say) as store:
        episodes = parts.episodes() if episodes is None else episodes
        resume_dir = config.get("resume_dir")
        if not (parts.planning or resume_dir) and (
            done := finished_before(config, job, episodes, rerun, say)
        ):
            return JobOutcome(done, "reused")
        if resume_dir and not parts.planning:
            if line := release_on_resume(store, place.sweep_dir):  # what a killed attempt held
                say(line)
        meter = parts.meter(store, place.sweep_dir)
        if meter.dry:  # a plan: a throw-away folder
            dry_dir = Path(tempfile.mkdtemp(prefix="recallbench-plan-run-")) / job
            place = JobPlace(place.sweep_dir, dry_dir, sweep)
        runner = parts.runner(place.run_dir, config, meter, len(episodes))
        if not meter.dry:
            _record_start(config, store, place, job, argv)
        stopped = _run_guarded(runner, place, job, episodes, argv, say)
        if stopped is not None:
            exit_status = None if (in_worker or (sweep and stopped[1])) else stopped[0]
            return JobOutcome(place.run_dir, "stopped", exit_status)
        if meter.dry:
            parts.finish_plan(runner, meter, store, place, len(episodes))
            return JobOutcome(None, "planned")
        if runner.already_finished:
            say(
                f"recallbench: {place.run_dir} already {runner.log.status}: nothing to run or "
                "score (a new run: drop resume_dir)"
            )
            return JobOutcome(place.run_dir, "already")
        report_done(runner.log, place.run_dir, say)
        return JobOutcome(place.run_dir, "ran")


def finished_before(
    config: Mapping[str, JSON],
    job: str,
    episodes: Sequence[Episode],
    rerun: bool | None = None,
    say: Callable[[str], None] = say_stderr,
) -> Path | None:
    """The finished run ``job`` reuses (``run.resume.reusable_run``: the newest usable run of
    the job under its tag with the same config, packages, episodes and code), said in one
    line, unless ``rerun`` (None: ``RECALLBENCH_RERUN``); None: the job runs."""
    if rerun_asked() if rerun is None else rerun:
        return None
    identity = run_identity(dict(config), episodes)
    results = Path(str(_mapping(config.get("paths"))["results_dir"]))
    done = reusable_run(results, str(config["tag"]), job, identity)
    if done is not None:
        say(f"recallbench: {job}: reusing {done} ({REUSED})")
    return done


def _mapping(value: object) -> Mapping[str, JSON]:
    return value if isinstance(value, Mapping) else {}


def _record_start(
    config: Mapping[str, JSON], store: Store, place: JobPlace, job: str, argv: Sequence[str] | None
) -> None:
    """The job's entry in ``sweep.json``: running, where, the sweep's budget, store, ledger and
    the command that resumes it."""
    from recallbench.llm.budget import Budget

    budget = Budget.of(dict(_mapping(config.get("sweep"))), "sweep")
    record_job(
        place.sweep_dir,
        job,
        status="running",
        host=platform.node(),
        pid=os.getpid(),
        budget={"max_usd": budget.max_usd, "max_calls": budget.max_calls},
        store=store.url if store.server else "sqlite",
        ledger=store.url,  # where `recallbench status` reads the sweep's ledger
        resume=resume_command(place.run_dir, place.sweep, argv),
    )


def _run_guarded(
    runner: Runner,
    place: JobPlace,
    job: str,
    episodes: Sequence[Episode],
    argv: Sequence[str] | None,
    say: Callable[[str], None],
) -> tuple[int, bool] | None:
    """Run the episodes and record the end in ``sweep.json``. A clean stop says why and how to
    resume and returns ``(exit status, a budget or a lost store)``: a job of a sweep stopped so
    returns (its other jobs go on; the command exits with the worst outcome, ``sweep_exit``),
    a signal ends a sweep at once (the user asked). None: the run ended."""
    from recallbench.llm.budget import BudgetExceeded
    from recallbench.run.record import RunInterrupted

    run_dir, dry = place.run_dir, runner.llm.meter.dry
    n = len(episodes)
    try:
        runner.run(episodes)
    except RunStopped as stop:  # a budget, or the store went away (StoreLost)
        budget = isinstance(stop, BudgetExceeded)
        why = f"stopped by the budget: {stop.reason}" if budget else f"stopped: {stop.reason}"
        then = "raise it and resume" if budget else "once it answers, resume"
        report_stop(runner, place, job, why, then, n, argv, say)
        return stop.exit_status, True
    except RunInterrupted as stop:
        report_stop(runner, place, job, str(stop), "resume", n, argv, say)
        return stop.exit_status, False
    except EndpointDown as exc:
        record_end(runner.log, run_dir, place.sweep_dir, job)
        resume = resume_command(run_dir, place.sweep, argv)
        raise EndpointDown(f"{exc}; resume with: {resume}") from None
    except BaseException:
        if not dry:
            record_end(runner.log, run_dir, place.sweep_dir, job)
        raise
    if not dry:
        record_end(runner.log, run_dir, place.sweep_dir, job)
    return None


def report_stop(
    runner: Runner,
    place: JobPlace,
    job: str,
    why: str,
    then: str,
    n: int,
    argv: Sequence[str] | None,
    say: Callable[[str], None] = say_stderr,
) -> None:
    """One line for a run that stopped cleanly (run.json ``interrupted``), and its sweep state
    (``argv``: the command as typed, for the resume command)."""
    run_dir = place.run_dir
    record_end(runner.log, run_dir, run_dir.parent, job)
    say(
        f"recallbench: {why}, after {runner.log.episodes_done or 0}/{n} episodes "
        f"(run.json: interrupted); {then} with: {resume_command(run_dir, place.sweep, argv)}"
    )


@contextlib.contextmanager
def settled_job(
    config: Mapping[str, Any], job: str, sweep: bool, in_worker: bool
) -> Iterator[None]:
    """A job of a sweep (or in a worker) that stops or fails records it in ``sweep.json`` and
    returns, so the sweep's other jobs go on (joblib aborts them all when one raises; Hydra's
    basic launcher skips the rest) and the command exits with the worst outcome
    (``run.sweep.sweep_outcome``). A single run in this process keeps its own exit (75, or the
    error)."""
    if not (sweep or in_worker):
        yield
        return
    from recallbench.errors import UserError, one_line

    try:
        yield
    except RunStopped as stop:  # before its run (the store went away): interrupted
        status, reason = "interrupted", stop.reason
        say_stderr(f"recallbench: job {job} stopped: {reason}")
    except Exception as exc:
        status, reason = "failed", one_line(exc)
        if not isinstance(exc, UserError):
            traceback.print_exc()
        say_stderr(f"recallbench: job {job} failed: {reason}")
    else:
        return
    with contextlib.suppress(Exception):  # a job whose folder is unknown: nothing to record
        record_job(sweep_folder(config, sweep), job, status=status, reason=reason[:300])
