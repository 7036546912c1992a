"""Find run folders and select among them (tag, stamp, job, status, config choices).

Each run is read by the run layer's one reader (``run.read.read_run``: a ``RunRecord``).

A run is keyed by ``(tag, stamp, job)`` (``RunRecord.key``): job names repeat across tags and
stamps. ``status`` is run.json's, except that a ``running`` record whose process is gone reads
``stale`` (``run.record.is_stale``). ``find_runs(finished=True)`` keeps the usable statuses,
``finished`` and ``degraded``; ``runs_in`` finds the runs under any folder (a run, a sweep, a
tag, a results folder); ``find_results_dir`` finds the project's results from wherever the
caller runs (a notebook's kernel runs in ``notebooks/``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from recallbench.run.read import RUN_FILE, RunRecord, is_run_folder, read_run
from recallbench.run.record import USABLE

# Where ``run_folders`` looks for run.json under a folder (a run, a sweep, a tag, runs/, results).
RUN_PATTERNS = ("", "*/", "*/*/", "*/*/*/", "runs/*/*/*/")

# The folders ``find_runs``/``runs_in`` listed while a ``reading_runs()`` block was open: a table
# is keyed on the runs it read (cli/table.py), not on every run of the results folder.
_READING: list[set[str]] = []


@contextmanager
def reading_runs() -> Iterator[set[str]]:
    """Yield a set that collects, resolved, every folder ``find_runs`` (``results/runs`` or
    ``results/runs/<tag>``), ``runs_in`` (the folder given) and ``note_read`` list in the block."""
    seen: set[str] = set()
    _READING.append(seen)
    try:
        yield seen
    finally:
        _READING.remove(seen)


def note_read(folder: str | Path) -> None:
    """Record that ``folder``'s runs were listed (for every open ``reading_runs`` block)."""
    for seen in _READING:
        seen.add(str(Path(folder).resolve()))


def _read_run(path: Path) -> RunRecord | None:
    return read_run(path) if is_run_folder(path) else None


def find_runs(
    results_dir: str | Path, tag: str | None = None, *, finished: bool = True
) -> list[RunRecord]:
    """List run folders under ``results_dir/runs`` (optionally one tag), oldest stamp first."""
    root = Path(results_dir) / "runs"
    note_read(root / tag if tag else root)
    pattern = f"{tag}/*/*" if tag else "*/*/*"
    runs = [r for p in sorted(root.glob(pattern)) if p.is_dir() and (r := _read_run(p))]
    if finished:  # finished or degraded (tables flag cells built from degraded runs)
        runs = [r for r in runs if r.status in USABLE]
    return sorted(runs, key=lambda r: (r.stamp, r.job))


def runs_in(folder: str | Path, *, finished: bool = True) -> list[RunRecord]:
    """List the run folders in ``folder``: a run, a sweep (stamp), a tag, ``runs/`` or results.

    Raises FileNotFoundError naming the folder when it does not exist.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder (expected a run or sweep folder)")
    note_read(folder)
    runs = [r for p in run_folders(folder) if (r := _read_run(p))]
    if finished:
        runs = [r for r in runs if r.status in USABLE]
    return sorted(runs, key=lambda r: (r.stamp, r.tag, r.job))


def run_folders(folder: Path) -> list[Path]:
    """The folders holding a run.json in or under ``folder`` (``RUN_PATTERNS``), sorted."""
    return sorted(
        {p.parent for pattern in RUN_PATTERNS for p in folder.glob(f"{pattern}{RUN_FILE}")}
    )


def latest_per_job(runs: list[RunRecord]) -> dict[tuple[str, str], RunRecord]:
    """Keep the newest run of every job of every tag, keyed by ``(tag, job)``.

    Same-named jobs under different tags (two sweeps of ``memory.k``) stay apart.
    """
    out: dict[tuple[str, str], RunRecord] = {}
    for run in sorted(runs, key=lambda r: r.stamp):  # newer stamps overwrite older ones
        out[run.tag, run.job] = run
    return out


def override_keys(run: RunRecord) -> list[str]:
    """The config keys the run's overrides set (``memory.k``, ``memory``), in their order."""
    keys = (o.split("=", 1)[0].lstrip("+~") for o in run.overrides if "=" in o)
    return list(dict.fromkeys(keys))


def config_value(run: RunRecord, key: str) -> object:
    """Return the run's value of ``key``: a group's choice, else the typed config value.

    ``memory`` -> ``memory_retrieval`` (the choice), ``memory.k`` -> ``2`` (an int, from
    the run's resolved config), ``episodes`` -> ``2``. Absent values are None.
    """
    if "." not in key and key in run.choices:
        return run.choices[key]
    if "." not in key:
        return run.config.value(key)
    return run_value(run, key)


# Short names of config paths a selector may use: the conversation logs a run replayed (LUFY:
# each system's logs, ``dataset.options.system``).
ALIASES = {"logs": "dataset.options.system"}


def run_value(run: RunRecord, key: str) -> object:
    """Return a run's config-group choice (``memory``) or config value (``memory.threshold``).

    A key without a dot names a config group (``job``: the run's job name); a dotted key (or an
    ``ALIASES`` name) a value of the run's resolved config (``RunConfig.value``). Absent values
    are None.
    """
    key = ALIASES.get(key, key)
    if key == "job":  # the run's job name (an imported answer file's --name)
        return run.job
    if "." not in key:
        return run.choice(key)
    return run.config.value(key)


def _as_list(value: object) -> list[object]:
    return list(value) if isinstance(value, list | tuple) else [value]


def matches(run: RunRecord, selector: Mapping[str, object]) -> bool:
    """Return True when ``run_value(run, key)`` is in every ``selector[key]`` (a value or a list)."""
    return all(run_value(run, key) in _as_list(want) for key, want in selector.items())


def select(runs: Iterable[RunRecord], selector: Mapping[str, object]) -> list[RunRecord]:
    """Return the runs that match ``selector`` (see ``matches``), in their order."""
    return [run for run in runs if matches(run, selector)]
