"""The project files a process ran and read: what a finished run (and a table) is keyed on.

A run's numbers are a function of its config, its packages, its data and the code it ran, not of
the commit around that code: a docs commit or a commit to another method's package leaves every
file a run imported as it was. So a run records, when it ends (``sources``):

- ``modules``: the sha256 of the source file of every module of the project that its process
  imported (``sys.modules``: ``src/``, and ``scripts/``, ``bench/`` or ``tests/`` modules when
  they were imported) and that the job could reach: by import statements from the entry points
  or from a dotted path of its config (``run.imports``: a sweep's process imported the methods
  of all its jobs), and
- ``reads``: the sha256 of every other file of the project or of the data folders it opened for
  reading (conf files, ``resources/``, data files), seen by an audit hook (``io.watch_reads``)
  that a command installs when it starts (``watch``);

and a later job may reuse the run when ``changed`` finds none of those files changed on disk
(``run.resume.reusable_run``). Paths in the project are stored relative to it, so a moved
checkout still matches. Why this is sound and where it is not: ``docs/running.md``.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from recallbench.io import not_reads, opened_for_reading, watch_reads
from recallbench.run.imports import reachable

PACKAGE = Path(__file__).resolve().parents[1]  # src/recallbench (or an installed copy)
# A checkout's root holds src/, conf/, scripts/; an installed package is its own project.
PROJECT = PACKAGE.parents[1] if PACKAGE.parent.name == "src" else PACKAGE
SKIPPED_PARTS = frozenset({".git", "__pycache__", ".venv", "site-packages", ".mypy_cache"})
_hashes: dict[tuple[str, int, int], str] = {}  # (path, mtime_ns, size) -> sha256 of its bytes


def watch() -> None:
    """Start noting the files this process opens for reading (``io.watch_reads``)."""
    watch_reads()


def file_sha256(path: Path) -> str | None:
    """sha256 of a file's bytes as they are now (None: no such file); cached by mtime and size."""
    try:
        stat = path.stat()
        key = (str(path), stat.st_mtime_ns, stat.st_size)
        if key not in _hashes:
            with not_reads():  # hashing a file is not reading it as an input
                _hashes[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None
    return _hashes[key]


def project_key(path: Path) -> str:
    """A path in the project relative to it (portable across checkouts), else absolute."""
    return path.relative_to(PROJECT).as_posix() if path.is_relative_to(PROJECT) else str(path)


def project_path(key: str) -> Path:
    """The path a ``project_key`` names in this checkout."""
    return Path(key) if Path(key).is_absolute() else PROJECT / key


def _kept(path: Path, roots: Iterable[Path], exclude: Iterable[Path]) -> bool:
    """Whether ``path`` is a file of the project or a data root, outside ``exclude``."""
    if SKIPPED_PARTS.intersection(path.parts) or path.is_relative_to(sys.prefix):
        return False
    if any(path.is_relative_to(e) for e in exclude):
        return False
    return any(path.is_relative_to(r) for r in roots)


def imported_modules(roots: Iterable[str] | None = None) -> dict[str, str]:
    """``path -> sha256`` of the source of every project module this process imported; with
    ``roots`` (a job's config paths), of those a job from them could reach (``run.imports``)."""
    project: dict[str, tuple[Path, Any]] = {}
    for name, module in list(sys.modules.items()):
        origin = getattr(module, "__file__", None)
        if isinstance(origin, str) and origin.endswith(".py"):
            path = Path(origin).resolve()
            if _kept(path, [PROJECT], ()):
                project[name] = (path, module)
    if roots is not None:  # the graph of project modules only: third-party code is versioned
        names = reachable(roots, {n: m for n, (_, m) in project.items()})
        project = {n: v for n, v in project.items() if n in names}
    found = {project_key(path): file_sha256(path) for path, _ in project.values()}
    return {k: v for k, v in sorted(found.items()) if v is not None}


def sources(
    data_dirs: Iterable[str | Path] = (),
    exclude: Iterable[str | Path] = (),
    roots: Iterable[str] | None = None,
) -> dict[str, dict[str, str]]:
    """What this process ran and read so far: ``{"modules": {path: sha256}, "reads": {path:
    sha256}}``; ``modules`` as ``imported_modules(roots)``, ``reads`` the files of the project
    and of ``data_dirs`` it opened, but module sources (the import system reads them) and what
    lies under ``exclude`` (the results and cache folders, which the run writes)."""
    folders = [PROJECT, *(Path(d).resolve() for d in data_dirs if str(d))]
    skip = [Path(e).resolve() for e in exclude if str(e)]
    sources_of_modules = imported_modules()
    reads: dict[str, str] = {}
    for name in opened_for_reading():
        path = Path(name).resolve()
        if path.suffix == ".pyc" or not _kept(path, folders, skip):
            continue
        if project_key(path) not in sources_of_modules and (sha := file_sha256(path)) is not None:
            reads[project_key(path)] = sha
    return {"modules": imported_modules(roots), "reads": reads}


def changed(recorded: Mapping[str, object]) -> str | None:
    """The first recorded file (``sources``) whose bytes are not as recorded, or that is gone;
    ``"sources"`` for a malformed record or one without modules; None: every file unchanged."""
    modules, reads = recorded.get("modules"), recorded.get("reads")
    if not isinstance(modules, dict) or not isinstance(reads, dict) or not modules:
        return "sources"  # a run that recorded no module cannot say what it ran
    for group in (modules, reads):
        for key, sha in group.items():
            if file_sha256(project_path(key)) != sha:
                return str(key)
    return None
