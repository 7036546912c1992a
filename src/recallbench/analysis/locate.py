"""Find the project's results folder from wherever the caller runs, and say what is in it.

A notebook's kernel runs in ``notebooks/``, a script anywhere: a relative ``results`` would
find nothing there. ``find_results_dir`` resolves, in order: the path given, else
``$RECALLBENCH_RESULTS_DIR`` (a relative one against the working folder when it exists there,
else against the project root, as the Makefile means it), else the nearest folder at or above
the working folder that holds ``results/runs``, else the project root's ``results`` (the
nearest checkout: ``pyproject.toml`` beside the root config ``recallbench.ROOT_CONFIG``), else
``./results``.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from recallbench import ROOT_CONFIG
from recallbench.analysis.runs import find_runs
from recallbench.run.record import USABLE

ENV = "RECALLBENCH_RESULTS_DIR"


def project_root(start: str | Path | None = None) -> Path | None:
    """Return the nearest folder at or above ``start`` that is a recallbench checkout."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file() and (folder / ROOT_CONFIG).is_file():
            return folder
    return None


def find_results_dir(path: str | Path | None = None, *, start: str | Path | None = None) -> Path:
    """Return the absolute results folder to read (see the module docstring for the order)."""
    here = Path(start or Path.cwd()).resolve()
    given = path if path is not None else os.environ.get(ENV) or None
    root = project_root(here)
    if given is not None:
        given = Path(given).expanduser()
        if given.is_absolute() or (here / given).exists() or root is None:
            return (here / given).resolve()
        return (root / given).resolve()
    for folder in (here, *here.parents):
        if (folder / "results" / "runs").is_dir():
            return folder / "results"
    return (root or here) / "results"


def explain_no_runs(results_dir: str | Path, tag: str | None = None) -> str:
    """One paragraph for a reader who found no finished runs: where, what is there, what to do."""
    root = Path(results_dir)
    where = root / "runs" / (tag or "*")
    every = find_runs(root, finished=False)
    if not every:
        return (
            f"No runs under {root / 'runs'} (results folder: {root}). Start one "
            "(`recallbench dataset=msc memory=memory_retrieval`, or a sweep with -m), or point "
            f"${ENV} at the results folder that holds them."
        )
    finished = Counter(r.tag for r in every if r.status in USABLE)
    tags = ", ".join(f"{t} ({finished.get(t, 0)} finished)" for t in sorted({r.tag for r in every}))
    pool = [r for r in every if tag is None or r.tag == tag]
    unfinished = Counter(r.status for r in pool if r.status not in USABLE)
    stuck = ", ".join(f"{n} {status}" for status, n in sorted(unfinished.items()))
    return (
        f"No finished runs under {where}."
        + (f" Runs there that did not finish: {stuck}." if stuck else "")
        + f" Tags under {root / 'runs'}: {tags}. Set RECALLBENCH_TAG to one of them"
        + " (or unset it for all tags)."
    )
