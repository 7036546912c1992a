"""A command whose runs all finished comes back without composing its jobs again.

``run`` reuses a job's finished run when its identity matches (``run.resume.reusable_run``), but
only after Hydra composed the job, and Hydra composes every job of a sweep twice (the sweeper
validates the batch, then the launcher runs it): 0.3-1.5 s per job here, so a 9-job sweep whose
runs all finished still cost 10-20 s. This module short-cuts that for a command repeated as is:

- ``note_job`` collects, per job this process ran or reused, its run folder, config hash, dataset
  sha256 and a fingerprint of the files its data came from (``data_paths``: paths, sizes,
  modification times);
- ``record_command`` writes them after the command succeeded to
  ``<results>/cache/commands/<key>.json`` with the package versions and the sha256 of every
  project module the command's process imported and file it read (``run.sources``); the
  key hashes the command line, the working folder and the ``RECALLBENCH_*`` settings the configs
  read. Nothing in a record names the checkout: the working folder and data paths inside the
  project are relative to it (``run.sources.project_key``) and run folders relative to the
  results folder, so a second checkout (or worktree) with the same results reuses the record;
- ``replay_command`` finds the record of this command and returns its run folders when all of
  it still holds: the same packages, every recorded module and file unchanged, every data file
  unchanged, every folder still the newest usable run of its job with the recorded config hash
  and dataset sha256. Anything else (or ``RECALLBENCH_RERUN=1``, a plan) goes through Hydra,
  where each job is reused or run by itself.

The conf files Hydra composed are among the files the process read, so a changed config (or
a new job of a sweep) goes through Hydra.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TypedDict, cast

from omegaconf import DictConfig

from recallbench.cli.build import plain
from recallbench.io import write_json
from recallbench.records import JSON, Episode
from recallbench.run.job import REUSED, finished_before
from recallbench.run.provenance import package_versions
from recallbench.run.read import read_run
from recallbench.run.record import USABLE
from recallbench.run.resume import (
    previous_log,
    rerun_asked,
    same_code,
)
from recallbench.run.sources import file_sha256, project_key, project_path, sources

__all__ = [
    "code_identity",
    "data_paths",
    "fingerprint",
    "note_job",
    "record_command",
    "replay_command",
    "replayed",
    "reused_run",
    "start_command",
]

# per invocation, never part of what a command computes
PER_INVOCATION = {
    "RECALLBENCH_STAMP",
    "RECALLBENCH_RERUN",
    "RECALLBENCH_VERBOSE",
}


class CommandJob(TypedDict):
    """One job of a command's record (``cache/commands/<key>.json``)."""

    tag: str
    job: str
    run: str
    config_hash: str | None
    dataset_sha256: str | None
    data: list[str]
    data_fingerprint: str


class CodeIdentity(TypedDict):
    """What a command's or a table's record is keyed on (``code_identity``)."""

    versions: dict[str, str]
    sources: dict[str, dict[str, str]]


_JOBS: list[CommandJob] = []  # what this process's command ran or reused


def results_dir(argv: Sequence[str]) -> Path:
    """The results folder of a command line: its ``paths.results_dir=``, else the config's
    default (``RECALLBENCH_RESULTS_DIR``, else ``results``)."""
    given = [a.split("=", 1)[1] for a in argv if a.startswith("paths.results_dir=")]
    return Path(given[-1] if given else os.environ.get("RECALLBENCH_RESULTS_DIR", "results"))


def command_key(argv: Sequence[str]) -> str:
    """sha256 (24 hex) of the command line, the working folder (relative to the checkout when
    inside it: relative paths in the command mean the same files in every checkout) and the
    settings configs read."""
    env = {k: v for k, v in os.environ.items() if k.startswith("RECALLBENCH_")}
    env = {k: v for k, v in sorted(env.items()) if k not in PER_INVOCATION}
    blob = json.dumps([project_key(Path.cwd()), list(argv), env], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:24]


def data_paths(dataset: Mapping[str, JSON]) -> list[str]:
    """The files a dataset node reads: its ``data_dir`` and any option naming an existing path
    (``run.sources.project_key``s: relative to the checkout when inside it)."""
    options = dict(dataset.get("options") or {})
    found = [str(dataset.get("data_dir") or "")]
    found += [v for v in options.values() if isinstance(v, str) and v and Path(v).exists()]
    return sorted({project_key(Path(p).resolve()) for p in found if p})


def fingerprint(paths: Iterable[str]) -> str:
    """sha256 of every file under ``paths`` (``data_paths``' keys): its name under its key,
    size and modification time; inside the checkout its bytes instead of the time (a second
    checkout or worktree holds the same files written at another time)."""
    digest = hashlib.sha256()
    for root in sorted(paths):
        base = project_path(root)
        files = [base] if base.is_file() else sorted(base.rglob("*")) if base.is_dir() else []
        digest.update(f"{root}\0{len(files)}\n".encode())
        for f in files:
            if f.is_file():
                st = f.stat()
                when = file_sha256(f) if not Path(root).is_absolute() else st.st_mtime_ns
                name = f.relative_to(base).as_posix()
                digest.update(f"{name}\0{st.st_size}\0{when}\n".encode())
    return digest.hexdigest()


def start_command() -> None:
    """Forget the jobs of an earlier command of this process (one that failed, a test's)."""
    _JOBS.clear()


def note_job(tag: str, job: str, folder: Path, dataset: Mapping[str, JSON]) -> None:
    """Collect one finished (or reused) job of this command for ``record_command``."""
    log = previous_log(folder)
    paths = data_paths(dataset)
    known = [j["data_fingerprint"] for j in _JOBS if j["data"] == paths]  # a sweep's data
    _JOBS.append(
        {
            "tag": tag,
            "job": job,
            "run": str(folder),
            "config_hash": log.config_hash if log else None,
            "dataset_sha256": log.dataset_sha256 if log else None,
            "data": paths,
            "data_fingerprint": known[0] if known else fingerprint(paths),
        }
    )


def code_identity(data: Iterable[str] = (), writes: Iterable[str | Path] = ()) -> CodeIdentity:
    """The packages and what this process ran and read so far (``run.sources``; files under
    ``data`` too, none under ``writes``): what a command's or a table's record is keyed on."""
    return {"versions": package_versions(), "sources": sources(data, writes)}


def record_command(argv: Sequence[str], planning: bool = False) -> Path | None:
    """Write the record of this command's jobs (None: a plan, or nothing to record)."""
    jobs = list(_JOBS)
    start_command()
    if planning:
        return None
    if not jobs:
        return None
    results = results_dir(argv)
    code = code_identity([str(project_path(p)) for j in jobs for p in j["data"]], [results])
    path = results / "cache" / "commands" / f"{command_key(argv)}.json"
    kept: list[CommandJob] = [{**j, "run": _in_results(results, j["run"])} for j in jobs]
    write_json(path, {"argv": list(argv), "code": code, "jobs": kept})
    return path


def _in_results(results: Path, run: str) -> str:
    """A run folder relative to the results folder (a moved or copied results folder keeps
    its records); absolute when it lies elsewhere (a ``resume_dir`` outside it)."""
    folder, root = Path(run).resolve(), results.resolve()
    return folder.relative_to(root).as_posix() if folder.is_relative_to(root) else str(folder)


def _still_newest(job: CommandJob) -> bool:
    """Whether the recorded run is still its job's newest usable run, as recorded."""
    folder = Path(job["run"])
    log = previous_log(folder)
    if log is None or not read_run(folder).usable:
        return False
    if (log.config_hash, log.dataset_sha256) != (job["config_hash"], job["dataset_sha256"]):
        return False
    newer = [s / job["job"] for s in folder.parent.parent.iterdir() if s.name > folder.parent.name]
    return not any(_usable_status(n) for n in newer)


def _usable_status(folder: Path) -> bool:
    """Is the run in ``folder`` finished or degraded (its summary aside)?"""
    log = previous_log(folder)
    return log is not None and log.status in USABLE


def replay_command(argv: Sequence[str]) -> list[CommandJob] | None:
    """The recorded jobs of this command when every one of them can be reused as is."""
    path = results_dir(argv) / "cache" / "commands" / f"{command_key(argv)}.json"
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if record.get("argv") != list(argv) or not same_code(record.get("code")):
        return None
    # json.loads returns Any: the jobs are as ``record_command`` wrote them
    recorded = cast("list[CommandJob]", list(record.get("jobs") or []))
    results = results_dir(argv)  # a run relative to it, or (an older record) absolute
    jobs: list[CommandJob] = [{**j, "run": str(results / j["run"])} for j in recorded]
    prints: dict[tuple[str, ...], str] = {}  # the jobs of a sweep share their data folder
    for job in jobs:
        data = tuple(job["data"])
        prints[data] = prints.get(data) or fingerprint(data)
        if prints[data] != job["data_fingerprint"] or not _still_newest(job):
            return None
    return jobs or None


def reused_run(
    cfg: DictConfig,
    job: str,
    config: dict[str, JSON],
    episodes: Sequence[Episode],
    rerun: bool | None,
) -> Path | None:
    """The finished run ``job`` reuses (``run.job.finished_before``, said on stderr), noted for
    this command's record; None: the job runs."""
    done = finished_before(config, job, episodes, rerun)
    if done is not None:
        note_job(str(cfg.tag), job, done, plain(cfg.dataset))
    return done


def replayed(argv: list[str], planning: bool = False) -> bool:
    """Print the runs of ``argv`` when this command finished before with the same code,
    configs and data (its checks passed then) and neither a plan nor a rerun is asked."""
    if planning or rerun_asked() or (jobs := replay_command(argv)) is None:
        start_command()  # this command's jobs are collected from here on
        return False
    for done in jobs:
        print(f"recallbench: {done['job']}: reusing {done['run']} ({REUSED})", file=sys.stderr)
        if not (sys.stdout.isatty() and sys.stderr.isatty()):
            print(done["run"])
    return True
