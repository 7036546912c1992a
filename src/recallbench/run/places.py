"""Where a job runs: its folders (``job_place``: the sweep folder and the run folder, or the
``resume_dir`` it continues, checked by ``check_resume_dir``) and its store (``job_store``)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from recallbench.errors import ResumeError
from recallbench.records import JSON
from recallbench.run.read import CONFIG_FILE, ITEMS_DIR, RUN_FILE, is_run_folder
from recallbench.run.report import say_stderr
from recallbench.run.sweep import sweep_folder

if TYPE_CHECKING:
    from recallbench.store import Store

__all__ = ["JobPlace", "check_resume_dir", "job_place", "job_store"]


@dataclass(frozen=True)
class JobPlace:
    """Where a job writes: its sweep folder ``runs/<tag>/<stamp>`` and its run folder."""

    sweep_dir: Path
    run_dir: Path
    sweep: bool


def check_resume_dir(resume_dir: str | None, sweep: bool = False) -> None:
    """A ``resume_dir`` names a run folder (a run.json inside) or, for a sweep (``-m``), the
    sweep's folder ``runs/<tag>/<stamp>`` whose job folders each resume (or start)."""
    if not resume_dir:
        return
    path = Path(resume_dir)
    if not path.is_dir():
        raise ResumeError(
            f"resume_dir={resume_dir}: no such folder; name the run folder of an interrupted run "
            "(results/runs/<tag>/<stamp>/<job>) or, with -m, its sweep folder "
            "(results/runs/<tag>/<stamp>), or drop resume_dir to start a new run"
        )
    is_run = is_run_folder(path)
    jobs = sorted(p.name for p in path.iterdir() if is_run_folder(p))
    if sweep and is_run:
        raise ResumeError(
            f"resume_dir={resume_dir}: one run of a sweep; resume the whole sweep with -m and "
            f"resume_dir={path.parent} (finished jobs are skipped), or this run alone without -m"
        )
    if not sweep and not is_run:
        found = f" (it holds the sweep jobs {', '.join(jobs[:4])}{' ...' if len(jobs) > 4 else ''})"
        raise ResumeError(
            f"resume_dir={resume_dir}: not a run folder (no {RUN_FILE} inside)"
            f"{found if jobs else ''}; name the folder that holds {RUN_FILE}, {CONFIG_FILE} "
            f"and {ITEMS_DIR}/, or resume a sweep folder with -m and the sweep's overrides"
        )


def job_place(config: Mapping[str, JSON], job: str, sweep: bool) -> JobPlace:
    """The job's folders: ``<sweep folder>/<job>``, or ``resume_dir`` for a resumed single run
    (a resumed sweep's ``resume_dir`` is its sweep folder)."""
    resume_dir = config.get("resume_dir")
    check_resume_dir(str(resume_dir) if resume_dir else None, sweep)
    sweep_dir = sweep_folder(config, sweep)
    run_dir = Path(str(resume_dir)) if resume_dir and not sweep else sweep_dir / job
    return JobPlace(sweep_dir, run_dir, sweep)


@contextlib.contextmanager
def job_store(
    config: Mapping[str, JSON], say: Callable[[str], None] = say_stderr
) -> Iterator[Store]:
    """The job's store (``store=sqlite`` or ``redis://...``), the process's shared store until
    the job ends (then closed); a server without AOF gets one warning line."""
    from recallbench.store import open_store, use_store

    paths = config.get("paths")
    cache_dir = paths.get("cache_dir") if isinstance(paths, Mapping) else None
    store = open_store(str(config.get("store") or "sqlite"), str(cache_dir))
    use_store(store)
    try:
        check = getattr(store, "check_persistence", None)
        if check is not None and (warning := check()):
            say(f"recallbench: warning: {warning}")
        yield store
    finally:
        use_store(None)
        store.close()
