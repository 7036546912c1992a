"""A sweep as one experiment: its store, its places checked before work, its state on disk.

- ``check_places(cfg)``: before any work (``cli.checks.check_command_line`` calls it for every
  job), a results or cache folder that cannot be written, a SQLite cache on a network file
  system (``store.fs.network_fs``) and a malformed ``store`` are one line each (exit 2).
- ``job_store(cfg)``: the job's store (``store=sqlite`` or ``redis://...``), made the
  process's shared store (``store.use_store``) so every cache, the sweep's ledger and the rate
  buckets of the job use it.
- ``record_job``: every job writes its state to ``runs/<tag>/<stamp>/sweep.json`` (status,
  attempt, requests sent, spend, host, pid, the resume command), under a file lock; ``recallbench
  status <sweep folder>`` (``status_main``) prints it.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
import time
import traceback
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from omegaconf import DictConfig

from recallbench.errors import ConfigError, RunStopped
from recallbench.run.sweep import (
    DONE,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    RESUMABLE,
    SWEEP_FILE,
    job_status,
    read_sweep,
    sweep_lines,
    worst_exit,
)
from recallbench.store import (
    Store,
    network_fs,
    open_store,
    unwritable,
    use_store,
)
from recallbench.store import is_server as is_server_store

if TYPE_CHECKING:
    from recallbench.run.runner import Runner

# The stamp of one invocation, a user's setting (the Makefile sets one per make invocation so the
# sweeps of a table share a folder); ``cli.main`` passes it on as ``stamp=``.
STAMP_ENV = "RECALLBENCH_STAMP"


def check_places(cfg: DictConfig, mounts: str | None = None) -> None:
    """Refuse, in one line, the folders and the store a job cannot use (module docstring).

    ``mounts``: a mount table's text (tests); default ``/proc/self/mounts``."""
    from recallbench.cli.build import plain
    from recallbench.llm.budget import Budget

    Budget.of(plain(cfg.get("sweep") or {}), "sweep")  # a bad bound is one line before work
    spec = str(cfg.get("store") or "sqlite")
    if spec != "sqlite" and not is_server_store(spec):
        raise ConfigError(
            f"store={spec!r}: expected sqlite (one machine) or redis://host:port/db (a Redis or "
            "Valkey server shared by every job)"
        )
    for key in ("results_dir", "cache_dir"):
        folder = cfg.paths[key]
        if why := unwritable(folder):
            raise ConfigError(
                f"paths.{key}={folder}: cannot write there ({why}); point paths.{key} at a "
                "folder this user can write"
            )
    if spec == "sqlite" and (kind := network_fs(cfg.paths.cache_dir, mounts)):
        raise ConfigError(
            f"paths.cache_dir={cfg.paths.cache_dir} is on a network file system ({kind}), where "
            "SQLite's locks are unsafe: use a server store (store=redis://host:port/db, README "
            "'Clusters') or a node-local cache (paths.cache_dir=/tmp/$USER/recallbench-cache)"
        )


def sweep_folder(cfg: DictConfig, sweep: bool) -> Path:
    """The sweep folder ``runs/<tag>/<stamp>`` of a job (a resumed run's: from ``resume_dir``)."""
    if cfg.get("resume_dir"):
        path = Path(cfg.resume_dir)
        return path if sweep else path.parent
    stamp = str(cfg.get("stamp") or os.environ.get(STAMP_ENV) or time.strftime("%Y%m%d-%H%M%S"))
    return Path(cfg.paths.results_dir) / "runs" / str(cfg.tag) / stamp


@contextlib.contextmanager
def job_store(cfg: DictConfig) -> Iterator[Store]:
    """The job's store, the process's shared store until the job ends (then closed); a server
    without AOF gets one warning line."""
    store = open_store(str(cfg.get("store") or "sqlite"), cfg.paths.cache_dir)
    use_store(store)
    try:
        check = getattr(store, "check_persistence", None)
        if check is not None and (warning := check()):
            print(f"recallbench: warning: {warning}", file=sys.stderr, flush=True)
        yield store
    finally:
        use_store(None)
        store.close()


def sweep_exit(folders: list[Path], since: float, argv: Sequence[str] | None = None) -> None:
    """After every job of the command ended: exit with the worst outcome of those this
    invocation ran (``run.sweep.worst_exit``: 1 if any failed or died, 75 if any stopped
    ``interrupted``, else return), in one line naming them and the command that resumes
    (``argv``: the command as typed, for a sweep none of whose jobs recorded one)."""
    outcome: dict[str, str] = {}
    resume = ""
    for folder in folders:
        path = folder / SWEEP_FILE
        if not path.is_file():
            continue
        data = read_sweep(path)
        for job, entry in sorted(data["jobs"].items()):
            if entry.get("updated_unix", 0) >= since:
                outcome[job] = job_status(entry)
                resume = str(data.get("resume") or resume_command(folder / job, True, argv))
    code = worst_exit(outcome.values())
    if code == 0:
        return
    fine = DONE if code == EXIT_INTERRUPTED else (*DONE, *RESUMABLE)
    bad = [j for j, s in outcome.items() if s not in fine]
    what = "failed or died" if code == EXIT_FAILED else "stopped interrupted"
    names = f"{', '.join(bad[:4])}{' ...' if len(bad) > 4 else ''}"
    counts = ", ".join(f"{n} {s}" for s, n in sorted(Counter(outcome.values()).items()))
    print(
        f"recallbench: {len(bad)} job(s) of the sweep {what} ({names}; jobs: {counts}); "
        f"{'fix them and ' if code == EXIT_FAILED else ''}resume with: {resume}",
        file=sys.stderr,
        flush=True,
    )
    sys.exit(code)


@contextlib.contextmanager
def settled_job(cfg: DictConfig, job: str, sweep: bool, in_worker: bool) -> Iterator[None]:
    """A job of a sweep (or in a worker) that stops or fails records it in ``sweep.json`` and
    returns, so the sweep's other jobs go on (joblib aborts them all when one raises; Hydra's
    basic launcher skips the rest) and ``sweep_exit`` exits with the worst outcome. A single
    run in this process keeps its own exit (75, or the error)."""
    if not (sweep or in_worker):
        yield
        return
    from recallbench.errors import UserError, one_line
    from recallbench.run.sweep import record_job

    try:
        yield
    except RunStopped as stop:  # before its run (the store went away): interrupted
        status, reason = "interrupted", stop.reason
        print(f"recallbench: job {job} stopped: {reason}", file=sys.stderr, flush=True)
    except Exception as exc:
        status, reason = "failed", one_line(exc)
        if not isinstance(exc, UserError):
            traceback.print_exc()
        print(f"recallbench: job {job} failed: {reason}", file=sys.stderr, flush=True)
    else:
        return
    with contextlib.suppress(Exception):  # a job whose folder is unknown: nothing to record
        record_job(sweep_folder(cfg, sweep), job, status=status, reason=reason[:300])


def status_main(argv: list[str] | None = None) -> None:
    """``recallbench status <sweep folder>``: per job finished / running / interrupted / failed,
    the spend against the sweep budget and the command that resumes the rest."""
    import argparse

    from recallbench.cli.config import user_errors
    from recallbench.cli.ledger import ledger_store, ledger_view, release_gone

    parser = argparse.ArgumentParser(
        prog="recallbench status",
        description="The state of a sweep's jobs (runs/<tag>/<stamp>/sweep.json)",
    )
    parser.add_argument("folder", help="a sweep folder results/runs/<tag>/<stamp>")
    parser.add_argument(
        "--release",
        action="store_true",
        help="give back the dollars reserved by processes that are gone (kill -9, a lost node)",
    )
    ns = parser.parse_args(argv)
    retry = shlex.join(["recallbench", "status", *(sys.argv[2:] if argv is None else argv)])
    with user_errors("recallbench status"):
        folder = Path(ns.folder)
        if not (folder / SWEEP_FILE).is_file():
            raise ConfigError(
                f"{folder}: no {SWEEP_FILE} (name a sweep folder results/runs/<tag>/<stamp> of "
                "a run started since sweeps record their state)"
            )
        data = read_sweep(folder / SWEEP_FILE)
        with ledger_store(data, retry) as store:
            released = release_gone(store, data) if store is not None and ns.release else None
            view = ledger_view(store, data) if store is not None else None
        print("\n".join(sweep_lines(folder, view)))
        if released:
            print(released)


def resume_command(run_dir: Path, sweep: bool = False, argv: Sequence[str] | None = None) -> str:
    """The command line that resumes ``run_dir``: the command's overrides (``argv``, as typed:
    ``Launch.argv``; None: this process's) + ``resume_dir=``; for a job of a sweep, ``-m`` and
    the sweep's folder (its finished jobs are skipped)."""
    import shlex

    argv = sys.argv[1:] if argv is None else argv
    drop = ("resume_dir=", "stamp=")
    args = [a for a in argv if not a.startswith(drop) and a not in ("-m", "--multirun")]
    target = run_dir.parent if sweep else run_dir
    return shlex.join(["recallbench", *(["-m"] if sweep else []), *args, f"resume_dir={target}"])


def report_stop(
    runner: Runner,
    run_dir: Path,
    sweep: bool,
    job: str,
    why: str,
    then: str,
    n: int,
    argv: Sequence[str] | None = None,
) -> None:
    """One line for a run that stopped cleanly (run.json ``interrupted``), and its sweep state
    (``argv``: the command as typed, for the resume command)."""
    from recallbench.run.sweep import record_end

    record_end(runner.log, run_dir, run_dir.parent, job)
    print(
        f"recallbench: {why}, after {runner.log.episodes_done or 0}/{n} episodes "
        f"(run.json: interrupted); {then} with: {resume_command(run_dir, sweep, argv)}",
        file=sys.stderr,
        flush=True,
    )


def report_done(runner: Runner, run_dir: Path) -> None:
    """The end of a run that ran: a degraded run's warning, the end-of-run summary, and a
    warning when the code was not a clean commit."""
    from recallbench.run.provenance import describe_code
    from recallbench.run.read import USAGE_FILE
    from recallbench.run.record import describe_problems
    from recallbench.run.report import print_end_of_run

    if runner.log.status == "degraded":
        print(
            f"recallbench: warning: run degraded ({describe_problems(runner.log.health or [])}); "
            f"samples of unparsed replies in {run_dir / USAGE_FILE}",
            file=sys.stderr,
            flush=True,
        )
    print_end_of_run(run_dir)
    if runner.log.git_dirty:
        print(
            f"recallbench: warning: code {describe_code(runner.log.code)}: this run is not "
            "reproducible from its commit alone (run.json: git_dirty, git_diff_sha256)",
            file=sys.stderr,
            flush=True,
        )
