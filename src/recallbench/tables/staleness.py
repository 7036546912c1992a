"""Whether a rendered table names the newest runs its selection would read now.

A table's md and tex headers name the runs its cells came from (``runs: <tag>/<stamp>, ...``,
``engine.header_for``). ``check_table`` compares them with the runs the table's ``runs:``
selects in the results folder today (``engine.table_runs``: the newest finished run of every
(tag, job)). The table is **stale** when, for a job it read, a newer run exists:

- the named sweep folder ``runs/<tag>/<named stamp>/<job>`` is here and the selection's run of
  that job has a newer stamp (the table read that job's run, and a newer one exists); or
- the named sweep folder is not here and the selection has a run of that tag newer than every
  stamp the header names (the runs the table was rendered from are gone, newer ones exist).

A job of a named tag absent from every named sweep folder that is here was not read by the
table (a builder that reads some jobs of a tag: the attribution tables), so a newer run of it
is not staleness. No matching runs at all is not staleness either: run folders are not
committed, so a fresh checkout (CI) cannot tell; ``status`` says so. Stamps compare as text,
the order ``latest_per_job`` picks the newest by.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from recallbench.errors import DataNotFoundError
from recallbench.tables.engine import table_runs
from recallbench.tables.render import table_stem
from recallbench.tables.spec import TableSpec

__all__ = ["Newer", "Staleness", "check_table", "named_runs"]

# the header's runs line in each format (tables.render: _markdown, _latex)
RUNS_LINE = {"md": re.compile(r"^- \*\*runs\*\*: (.*)$"), "tex": re.compile(r"^% runs: (.*)$")}
Status = Literal["current", "stale", "no runs", "reads no runs", "not rendered", "formats differ"]


@dataclass(frozen=True)
class Newer:
    """A job whose newest run is newer than the run the table names for it."""

    job: str
    named: str  # <tag>/<stamp> the header names
    newest: str  # <tag>/<stamp> of the newest run of the job
    named_absent: bool = False  # the named sweep folder is not in this results folder

    def describe(self) -> str:
        """One line: the job, the run the table names and the newer one."""
        gone = " (not in this results folder)" if self.named_absent else ""
        return f"job {self.job}: the table names {self.named}{gone}, the newest is {self.newest}"


@dataclass(frozen=True)
class Staleness:
    """What ``check_table`` found for one table file."""

    table: Path
    status: Status
    named: tuple[str, ...] = ()
    newer: tuple[Newer, ...] = ()
    detail: str = ""

    @property
    def stale(self) -> bool:
        """Whether the table must be rendered again (stale, missing, or its formats disagree)."""
        return self.status in ("stale", "not rendered", "formats differ")

    def describe(self) -> str:
        """The line ``recallbench-table --check`` prints for this table."""
        head = f"{self.table}: {self.status.upper() if self.stale else self.status}"
        if self.newer:
            return head + ": " + "; ".join(n.describe() for n in self.newer)
        return f"{head}: {self.detail}" if self.detail else head


def named_runs(path: Path) -> tuple[str, ...] | None:
    """The ``<tag>/<stamp>`` runs a rendered md or tex table names (None: no runs line)."""
    pattern = RUNS_LINE[path.suffix.lstrip(".")]
    for line in path.read_text(encoding="utf-8").splitlines():
        if match := pattern.match(line):
            value = match.group(1).strip()
            return () if value == "n/a" else tuple(v.strip() for v in value.split(", "))
    return None


def _header(md: Path, tex: Path) -> tuple[tuple[str, ...] | None, str]:
    """The runs the table's md (and tex, when there) name, or why they cannot be compared."""
    named = named_runs(md)
    if tex.is_file() and named_runs(tex) != named:
        return None, f"{md.name} and {tex.name} name different runs"
    return named, ""


def check_table(spec: TableSpec, results_dir: str | Path) -> Staleness:
    """Compare the runs ``spec``'s rendered table names with the newest matching runs."""
    results_dir = Path(results_dir)
    md = results_dir / "tables" / f"{table_stem(spec.paper, spec.id)}.md"
    if not md.is_file():
        return Staleness(
            md, "not rendered", detail=f"render it: recallbench-table {spec.experiment}"
        )
    named, differ = _header(md, md.with_suffix(".tex"))
    if differ:
        return Staleness(md, "formats differ", detail=f"{differ}: render it again")
    if spec.runs is None or not named:
        return Staleness(md, "reads no runs", named=named or ())
    try:
        runs = table_runs(spec, results_dir)
    except DataNotFoundError:
        return Staleness(
            md,
            "no runs",
            named=named,
            detail=f"no matching runs in {results_dir}/runs to compare with (run folders are "
            f"not committed: cannot tell whether {len(named)} named run(s) are the newest)",
        )
    stamps: dict[str, set[str]] = {}
    for tag, _, stamp in (n.partition("/") for n in named):
        stamps.setdefault(tag, set()).add(stamp)
    newer = []
    for run in runs:
        seen = stamps.get(run.tag, set())
        if not seen or run.stamp in seen:
            continue  # a tag the table read nothing of, or the very run it names
        sweeps = run.path.parent.parent  # results/runs/<tag>
        read = sorted(s for s in seen if (sweeps / s / run.path.name).is_dir())
        absent = not all((sweeps / s).is_dir() for s in seen)
        if read and run.stamp > read[-1]:
            newer.append(Newer(run.job, f"{run.tag}/{read[-1]}", f"{run.tag}/{run.stamp}"))
        elif not read and absent and run.stamp > max(seen):
            newer.append(Newer(run.job, f"{run.tag}/{max(seen)}", f"{run.tag}/{run.stamp}", True))
    if newer:
        return Staleness(md, "stale", named, tuple(newer))
    return Staleness(
        md, "current", named, detail=f"names the newest of {len(runs)} matching run(s)"
    )
