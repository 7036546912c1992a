"""A sweep's state on disk: ``runs/<tag>/<stamp>/sweep.json``, one entry per job.

Every job of a sweep merges its state into the file under a file lock (``record_job``): at the
start ``running`` with its host and pid, at the end its status (``finished``, ``degraded``,
``interrupted``, ``failed``), attempt, requests sent and dollars spent over its attempts (its
``usage.json``) and why it stopped; the sweep's own facts (the sweep budget, the store, the
command that resumes it) sit beside the jobs. ``sweep_lines`` is what ``recallbench status`` and
``recallbench view`` show: a job recorded ``running`` whose process is gone on this host is
``died`` (``kill -9``, a lost node on the same host). ``sweep_folder`` is where a job's sweep
writes (``runs/<tag>/<stamp>``), ``resume_command`` the command that resumes a job or a sweep,
and ``sweep_outcome`` the exit a command owes once every job ended.
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from recallbench.errors import ConfigError, DatasetFormatError
from recallbench.io import write_json
from recallbench.run.read import RunLog, read_run
from recallbench.store.base import Totals

SWEEP_FILE = "sweep.json"
# The stamp of one invocation, a user's setting (the Makefile sets one per make invocation so the
# sweeps of a table share a folder); ``cli.main`` passes it on as ``stamp=``.
STAMP_ENV = "RECALLBENCH_STAMP"


def new_stamp() -> str:
    """The stamp of a new command: ``$RECALLBENCH_STAMP`` or the time, to the second.

    THE stamp rule, called once per command (``cli.main``, ``recallbench matrix``,
    ``import-answers``; a job run from Python without ``stamp``: ``cli.job.run``), whose
    result every check, job and the exit code then receive as ``stamp=``: a stamp chosen twice
    names two folders whenever the clock's second turns between the two choices."""
    return os.environ.get(STAMP_ENV) or time.strftime("%Y%m%d-%H%M%S")


def sweep_name(sweep_dir: Path) -> str:
    """The ledger's name of a sweep folder ``runs/<tag>/<stamp>``: ``<tag>/<stamp>``."""
    return f"{sweep_dir.parent.name}/{sweep_dir.name}"


def record_job(sweep_dir: Path, job: str, **state: object) -> None:
    """Merge ``state`` into the job's entry of ``<sweep_dir>/sweep.json`` (under a file lock)."""
    import filelock

    sweep_dir.mkdir(parents=True, exist_ok=True)
    path = sweep_dir / SWEEP_FILE
    with filelock.FileLock(f"{path}.lock", timeout=60):
        data: dict[str, Any] = (
            read_sweep(path) if path.is_file() else {"sweep": sweep_name(sweep_dir), "jobs": {}}
        )
        entry = data["jobs"].setdefault(job, {})
        entry.update(state, updated_unix=time.time())
        for key in ("budget", "store", "ledger", "resume"):
            if key in state:  # the sweep's own facts, as the latest job saw them
                data[key] = entry.pop(key)
        write_json(path, data)


def read_sweep(path: Path) -> dict[str, Any]:
    """A ``sweep.json``; one that is not one is an error naming it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"{path}: not a sweep state file written by recallbench ({exc})"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), dict):
        raise ConfigError(f"{path}: not a sweep state file (expected an object with 'jobs')")
    return data


class JobUsage(TypedDict):
    """What a job sent: requests (cached answers not counted) and dollars."""

    calls: int
    usd: float


def job_usage(run_dir: Path) -> JobUsage:
    """Requests sent and dollars spent by a run over its attempts (its usage); none recorded
    (or an unreadable record): zero."""
    try:
        usage = read_run(run_dir, need_record=False).usage
    except (OSError, DatasetFormatError):
        usage = None
    if usage is None:
        return {"calls": 0, "usd": 0.0}
    return {"calls": usage.totals.sent, "usd": usage.totals.cost_usd or 0.0}


def _alive(entry: Mapping[str, object]) -> bool:
    """Is a job recorded ``running`` still running? Known only on its own host."""
    pid = entry.get("pid")
    if entry.get("host") != platform.node() or not pid:
        return True  # another machine: trust the record
    if not isinstance(pid, int | str):
        raise ConfigError(f"sweep.json: a job's pid is not a number: {pid!r:.80}")
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_lines(sweep_dir: Path, ledger: LedgerView | None = None) -> list[str]:
    """What ``recallbench status`` prints for a sweep folder; ``ledger``: what the sweep's
    ledger in its store counted (None: no ledger read), shown beside the jobs' own sum."""
    data = read_sweep(sweep_dir / SWEEP_FILE)
    lines = [f"sweep {data.get('sweep', sweep_name(sweep_dir))}: {sweep_dir}"]
    counts: dict[str, int] = {}
    calls, usd = 0, 0.0
    for job, entry in sorted(data["jobs"].items()):
        status = job_status(entry)
        counts[status] = counts.get(status, 0) + 1
        calls += int(entry.get("calls") or 0)
        usd += float(entry.get("usd") or 0.0)
        why = f"  ({entry['reason']})" if entry.get("reason") else ""
        lines.append(
            f"  {status:<11} {job}  attempt {entry.get('attempt', '?')}, "
            f"{entry.get('calls', 0)} requests, ${float(entry.get('usd') or 0):.4f}{why}"
        )
    budget = data.get("budget") or {}
    bound = ", ".join(f"sweep.{k}={v}" for k, v in budget.items() if v is not None) or "none"
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    lines.append(f"jobs: {summary}")
    lines.append(f"jobs' usage: {calls} requests, ${usd:.4f}; sweep budget: {bound}")
    if ledger is not None:
        lines += ledger_lines(ledger, calls, usd, died=counts.get("died", 0))
    if set(counts) - {"finished", "degraded"} and data.get("resume"):
        lines.append(f"resume the rest with: {data['resume']}")
    return lines


@dataclass(frozen=True)
class LedgerView:
    """A sweep ledger as ``status`` shows it: its totals, what each holder (``host:pid``) still
    reserves, and which holders are gone (``holder_gone``)."""

    totals: Totals
    held: dict[str, float] = field(default_factory=dict)
    gone: frozenset[str] = frozenset()


def ledger_lines(view: LedgerView, calls: int, usd: float, died: int = 0) -> list[str]:
    """The sweep ledger's figures beside the jobs' sum, and why they differ."""
    t = view.totals
    lines = [
        f"sweep ledger: {t.sent} requests sent, {t.tokens} tokens, ${t.spent:.4f} spent, "
        f"${t.reserved:.4f} reserved and not settled"
    ]
    if view.held:
        lines.append(
            "  reserved by: "
            + ", ".join(
                f"{h} ${r:.4f}{' (gone)' if h in view.gone else ''}" for h, r in view.held.items()
            )
        )
    missing = t.sent - calls
    if missing > 0 or t.spent - usd > 5e-7:
        killed = f"{died} job(s) died without recording theirs" if died else "none died"
        lines.append(
            f"difference: {max(missing, 0)} request(s), ${max(t.spent - usd, 0.0):.4f} the "
            "ledger counted are in no job's usage: requests in flight when the budget closed "
            "(sent; their job stopped before recording them) or sent by a job killed before "
            f"it recorded them ({killed}); the ledger's figures are what was sent"
        )
    if gone := [h for h in view.held if h in view.gone]:
        lines.append(
            f"${sum(view.held[h] for h in gone):.4f} is reserved by {len(gone)} process(es) "
            "that are gone and never settled: `recallbench status --release <folder>` (or a "
            "resume) gives it back"
        )
    return lines


def holder_gone(holder: str, jobs: Mapping[str, Mapping[str, object]]) -> bool:
    """Is the process ``host:pid`` that holds a reservation gone? On this host: its pid is not
    running. Elsewhere: a job of the sweep recorded with that host and pid has ended (a holder
    no job names is trusted: it may be running)."""
    host, _, pid = holder.rpartition(":")
    if not host or not pid.isdigit():
        return False
    if host == platform.node():
        return not _alive({"host": host, "pid": int(pid)})
    return any(
        e.get("host") == host and str(e.get("pid")) == pid and e.get("status") != "running"
        for e in jobs.values()
    )


def job_status(entry: Mapping[str, object]) -> str:
    """A job's status; one recorded ``running`` whose process is gone (on this host) is
    ``died`` (``kill -9``, a lost node)."""
    status = str(entry.get("status", "?"))
    if status == "running" and not _alive(entry):
        return "died"
    return status


# What a job's status says about the sweep's exit: a finished (or degraded) job is done, an
# interrupted one can resume (75, sysexits' EX_TEMPFAIL); anything else (failed, died, still
# running after its launcher returned, unknown) failed.
DONE = ("finished", "degraded")
RESUMABLE = ("interrupted",)
EXIT_INTERRUPTED, EXIT_FAILED = 75, 1


def worst_exit(statuses: Iterable[str]) -> int:
    """The submitting process's exit for jobs ending in ``statuses``: 0 only if every job
    finished, 1 if any failed, else 75 if any was interrupted and can resume."""
    seen = set(statuses)
    if seen - {*DONE, *RESUMABLE}:
        return EXIT_FAILED
    return EXIT_INTERRUPTED if seen & set(RESUMABLE) else 0


def record_end(log: RunLog, run_dir: Path, sweep_dir: Path, job: str) -> None:
    """A job's final state in ``sweep.json``, from its run log (``Runner.log``) and its usage;
    nothing when the run never started (a log not filled: status ``unknown``)."""
    if log.status == "unknown":
        return
    reason = log.stop_reason
    record_job(
        sweep_dir,
        job,
        status=log.status,
        attempt=log.attempt,
        reason=reason[:300] if reason else None,
        **job_usage(run_dir),
    )


# ----------------------------------------------------------------------------- places, exit


def sweep_folder(config: Mapping[str, Any], sweep: bool) -> Path:
    """The sweep folder ``runs/<tag>/<stamp>`` of a job (a resumed run's: from ``resume_dir``).

    The stamp is the config's ``stamp``, which the command chose once (``new_stamp``) and gave
    every check and job: never chosen here, where a second choice could fall in another second
    than the first."""
    if config.get("resume_dir"):
        path = Path(str(config["resume_dir"]))
        return path if sweep else path.parent
    if not config.get("stamp"):
        raise ValueError(
            "sweep_folder: the config has no stamp; the command chooses one "
            "(run.sweep.new_stamp) and passes it as stamp= to every check and job"
        )
    return (
        Path(str(config["paths"]["results_dir"]))
        / "runs"
        / str(config["tag"])
        / str(config["stamp"])
    )


def resume_command(run_dir: Path, sweep: bool = False, argv: Sequence[str] | None = None) -> str:
    """The command line that resumes ``run_dir``: the command's overrides (``argv``, as typed:
    ``Launch.argv``; None: this process's) + ``resume_dir=``; for a job of a sweep, ``-m`` and
    the sweep's folder (its finished jobs are skipped)."""
    import shlex
    import sys

    argv = sys.argv[1:] if argv is None else argv
    drop = ("resume_dir=", "stamp=")
    args = [a for a in argv if not a.startswith(drop) and a not in ("-m", "--multirun")]
    target = run_dir.parent if sweep else run_dir
    return shlex.join(["recallbench", *(["-m"] if sweep else []), *args, f"resume_dir={target}"])


def sweep_outcome(
    folders: Iterable[Path], since: float, argv: Sequence[str] | None = None
) -> tuple[int, str | None]:
    """The exit of a command whose jobs all ended: the worst outcome of those this invocation
    ran (``worst_exit``: 1 if any failed or died, 75 if any stopped ``interrupted``, else 0) and
    the line naming them and the command that resumes (None when 0; ``argv``: the command as
    typed, for a sweep none of whose jobs recorded one)."""
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
        return 0, None
    fine = DONE if code == EXIT_INTERRUPTED else (*DONE, *RESUMABLE)
    bad = [j for j, s in outcome.items() if s not in fine]
    what = "failed or died" if code == EXIT_FAILED else "stopped interrupted"
    names = f"{', '.join(bad[:4])}{' ...' if len(bad) > 4 else ''}"
    counts = ", ".join(f"{n} {s}" for s, n in sorted(Counter(outcome.values()).items()))
    return code, (
        f"recallbench: {len(bad)} job(s) of the sweep {what} ({names}; jobs: {counts}); "
        f"{'fix them and ' if code == EXIT_FAILED else ''}resume with: {resume}"
    )
