"""Rows that do the same thing: identical rows and flat sweeps, said in a note with the evidence.

A table whose rows (methods, ablations, a swept setting) show the same numbers says so instead
of letting a reader take the equality for a finding. Found on the rendered cells, for every
builder (``tables.engine``):

- **identical rows**: rows equal (to 1e-9) in at least half of the cells both have a number in
  (and at least 2), grouped transitively: "equal in 30 of 32 cells";
- **a flat sweep**: 3 or more rows whose numbers stay within ``rtol`` (1%) of each other in
  every cell (column x metric) at least two rows have;
- **a constant column**: one column x metric with the same number in every row that has one
  (at least 3 rows) while the table's rows differ elsewhere: "97.68 in all 9 rows", with the
  cells' item and episode counts (a column on a handful of items is often where it happens).

The evidence is what the memory behind each row did, read from its runs' ``summary.json``
``memory`` entry (``metrics.activity``; recomputed from the run folder for runs recorded
before it): records written, updated and deleted, the live store at the end and the items per
recall. A row without runs (the paper's own rows, builders that do not map rows to runs) is
named without evidence.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from recallbench.metrics.activity import COUNTS, METHOD
from recallbench.run.read import MEMORY_DIR, RunRecord
from recallbench.tables.cell import Cell, fmt

__all__ = [
    "activity_of",
    "constant_columns",
    "describe_activity",
    "flat_spread",
    "identical_groups",
    "sameness_notes",
]

RTOL = 0.01
Values = dict[str, dict[tuple[str, str], float]]  # row -> (column, metric) -> ours


def _values(cells: Sequence[Cell]) -> Values:
    out: Values = {}
    for c in cells:
        if isinstance(c.ours, int | float) and not isinstance(c.ours, bool):
            out.setdefault(c.row, {})[c.column, c.metric] = float(c.ours)
    return out


def _equal(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _equal_share(rows: Sequence[str], values: Values) -> tuple[int, int]:
    """(cells equal across all ``rows``, cells all of them have)."""
    keys = set.intersection(*(set(values[r]) for r in rows))
    equal = sum(1 for k in keys if all(_equal(values[rows[0]][k], values[r][k]) for r in rows))
    return equal, len(keys)


def identical_groups(values: Values) -> list[tuple[list[str], int, int]]:
    """Groups of rows equal (pairwise) in at least half of >= 2 shared cells, with k of m."""
    rows = list(values)
    parent = {r: r for r in rows}

    def root(r: str) -> str:
        while parent[r] != r:
            r = parent[r]
        return r

    for i, a in enumerate(rows):
        for b in rows[i + 1 :]:
            equal, shared = _equal_share([a, b], values)
            if shared >= 2 and 2 * equal >= shared:
                parent[root(b)] = root(a)
    groups: dict[str, list[str]] = {}
    for r in rows:
        groups.setdefault(root(r), []).append(r)
    return [(g, *_equal_share(g, values)) for g in groups.values() if len(g) > 1]


def flat_spread(values: Values, rtol: float = RTOL) -> tuple[float, tuple[str, str]] | None:
    """The largest relative spread over the cells of >= 3 rows, when every one is <= ``rtol``."""
    if len(values) < 3:
        return None
    keys = {k for row in values.values() for k in row}
    worst: tuple[float, tuple[str, str]] = (0.0, ("", ""))
    seen = False
    for key in keys:
        got = [row[key] for row in values.values() if key in row]
        if len(got) < 2:
            continue
        seen = True
        scale = max(abs(v) for v in got)
        spread = 0.0 if scale == 0 else (max(got) - min(got)) / scale
        if spread > rtol:
            return None
        worst = max(worst, (spread, key))
    return worst if seen else None


def constant_columns(cells: Sequence[Cell], min_rows: int = 3) -> list[str]:
    """One note per column x metric printed with the same number in every row (>= ``min_rows``)."""
    by_key: dict[tuple[str, str], list[Cell]] = {}
    for c in cells:
        if isinstance(c.ours, int | float) and not isinstance(c.ours, bool):
            by_key.setdefault((c.column, c.metric), []).append(c)
    notes = []
    for key, same in by_key.items():
        shown = {fmt(c.ours, c.shown_digits) for c in same}
        if len({c.row for c in same}) < min_rows or len(shown) != 1:
            continue
        counts = sorted({str(c.n) for c in same if c.n is not None})
        episodes = sorted({str(c.episodes) for c in same if c.episodes is not None})
        sizes = [f"n = {', '.join(counts)}"] if counts else []
        sizes += [f"episodes = {', '.join(episodes)}"] if episodes else []
        column = " / ".join(dict.fromkeys(k for k in key if k))  # a metric named as its column once
        notes.append(
            f"CONSTANT COLUMN: {column} is {shown.pop()} in all {len(same)} rows"
            + (f" ({'; '.join(sizes)})" if sizes else "")
            + ": no row differs from another in this column"
        )
    return notes


ActivityCache = dict[Path, dict[str, Any] | None]  # a run folder's activity_of, once per folder


def activity_of(run: RunRecord) -> dict[str, Any] | None:
    """A run's memory activity: its summary's ``memory`` entry when the current rule wrote it
    (its ``method``), else recomputed from the folder (a run scored before the rule changed)."""
    entry = run.summary.get("memory") if run.has_summary else None
    if isinstance(entry, dict) and entry.get("method") == METHOD:
        return entry
    if not (run.path / MEMORY_DIR).is_dir():
        return entry if isinstance(entry, dict) else None
    return run.memory_activity()


def describe_activity(runs: Sequence[RunRecord], cache: ActivityCache | None = None) -> str:
    """What the memory of ``runs`` did, summed over them, in one phrase."""
    cache = {} if cache is None else cache
    totals = dict.fromkeys(("episodes", *COUNTS), 0)
    sessions = 0
    found = False
    for run in runs:
        if run.path not in cache:
            cache[run.path] = activity_of(run)
        got = cache[run.path]
        if not got:
            continue
        found = True
        for key in totals:
            totals[key] += int(got["totals"].get(key, 0))
        if "returned" not in got["totals"]:  # a summary from before returns were counted
            t = got["totals"]
            totals["returned"] += int(t["store"]) - int(t["written"]) + int(t["deleted"])
        sessions += sum(int(s.get("episodes", 0)) for s in got["per_session"].values())
    if not found:
        return "no memory activity recorded"
    per = max(sessions, 1)
    recalls = totals["recalls"]
    recalled = (
        f"{totals['retrieved'] / recalls:.1f} items per recall ({totals['empty_recalls']} of "
        f"{recalls} empty)"
        if recalls
        else "no recall recorded"
    )
    return (
        f"{totals['written']} records written ({totals['written'] / per:.1f} per "
        f"episode-session), {totals['updated']} updated, {totals['deleted']} deleted or retired, "
        f"{totals['returned']} returned to memory over {totals['episodes']} episodes; "
        f"{totals['store'] / max(totals['episodes'], 1):.1f} live per episode at the end "
        f"(= (written - deleted + returned) / episodes); {recalled}"
    )


def _evidence(
    rows: Sequence[str], row_runs: Mapping[str, Sequence[RunRecord]], cache: ActivityCache
) -> str:
    texts = {r: describe_activity(row_runs[r], cache) for r in rows if row_runs.get(r)}
    if not texts:
        return "the table's builder did not map these rows to their runs, so no memory activity"
    parts = [f"{r}: {t}" for r, t in texts.items()]
    if len(texts) > 1 and len(set(texts.values())) == 1:
        parts.append("their memories did exactly the same")
    return "; ".join(parts)


def sameness_notes(
    cells: Sequence[Cell], row_runs: Mapping[str, Sequence[RunRecord]], rtol: float = RTOL
) -> list[str]:
    """Notes on identical rows and a flat sweep, each with the memory activity behind them."""
    values = _values(cells)
    cache: ActivityCache = {}
    notes = []
    groups = identical_groups(values)
    if (flat := flat_spread(values, rtol)) is not None:
        spread, (column, metric) = flat
        equal, shared = _equal_share(list(values), values)
        notes.append(
            f"FLAT: all {len(values)} rows stay within {rtol:.0%} of each other in every cell "
            f"(largest spread {spread:.2%}, {column} / {metric}; all equal in {equal} of "
            f"{shared} cells): what varies between them does not move these numbers. Memory "
            f"activity: {_evidence(list(values), row_runs, cache)}"
        )
        groups = [g for g in groups if len(g[0]) < len(values)]  # the FLAT note covers them
    for group, equal, shared in groups:
        names = ", ".join(f"'{r}'" for r in group)
        notes.append(
            f"IDENTICAL ROWS: {names} are equal in {equal} of {shared} cells. Memory activity: "
            f"{_evidence(group, row_runs, cache)}"
        )
    if flat is None and not any(len(g) == len(values) for g, _, _ in groups):
        notes += constant_columns(cells)
    return notes
