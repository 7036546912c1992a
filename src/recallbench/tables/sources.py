"""``runs: {tag: ..., folder: ...}``: a table that reads run folders by tag or by folder.

A user's own table (no ``paper``) usually compares runs the user made (a sweep of their method
and the baselines) rather than a paper experiment's sweep: ``tag`` names ``results/runs/<tag>``,
``folder`` any folder holding run folders (a sweep ``results/runs/<tag>/<stamp>``, a tag, a
run). Each takes one value or a list. The newest run of every (tag, job) is read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from recallbench.analysis import find_runs, latest_per_job, runs_in
from recallbench.errors import ConfigError, DataNotFoundError
from recallbench.run.read import RunRecord

RUN_SOURCES = ("tag", "folder")


def _strings(value: object) -> list[object]:
    return list(value) if isinstance(value, list | tuple) else [value]


def describe_sources(value: Mapping[str, object]) -> str:
    """``tag mysweep; folder results/runs/x``: how headers and messages name the runs."""
    return "; ".join(f"{key} {', '.join(map(str, _strings(value[key])))}" for key in value)


def parse_sources(
    value: Mapping[str, object], fail: Callable[[str, str], ConfigError]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Return the (tags, folders) of ``runs:``; ``fail(key, message)`` builds the error."""
    if not value or set(value) - set(RUN_SOURCES):
        raise fail(
            "runs",
            "expected an experiment name, null, or a mapping with 'tag' and/or 'folder' "
            f"(a string or a list of strings), got {dict(value)!r}",
        )
    found = {}
    for key in RUN_SOURCES:
        items = _strings(value.get(key, []))
        if not all(isinstance(v, str) and v for v in items):
            raise fail(
                f"runs.{key}", f"expected a non-empty string or a list of them, got {value[key]!r}"
            )
        found[key] = tuple(str(v) for v in items)  # strings, checked above
    return found["tag"], found["folder"]


def _folder(folder: str, results_dir: Path, where: str) -> Path:
    """A folder as given, else relative to the project (the results folder's parent)."""
    for candidate in (Path(folder), results_dir.parent / folder):
        if candidate.is_dir():
            return candidate
    raise DataNotFoundError(
        f"{where}: table.runs.folder: {folder} not found (looked in {Path.cwd()} and "
        f"{results_dir.parent})"
    )


def source_runs(
    tags: tuple[str, ...], folders: tuple[str, ...], results_dir: str | Path, where: str
) -> list[RunRecord]:
    """The newest finished run of every (tag, job) under the tags and folders."""
    results_dir = Path(results_dir)
    found = [r for tag in tags for r in find_runs(results_dir, tag)]
    found += [r for f in folders for r in runs_in(_folder(f, results_dir, where))]
    unique = {r.key: r for r in found}
    return list(latest_per_job(list(unique.values())).values())
