"""The Holm family of a table: which paired tests are corrected together, and the notes.

Every other row is tested against the table's reference row (``tables.significance``). The Holm
family is every such test that can reach alpha: a paired test by episode on n episodes cannot
give a two-sided p below ``2^(1 - n)`` (the exact sign-flip bound; with B resamples, nor below
``2 / (B + 1)``), so a test whose smallest attainable p exceeds alpha (n <= 5 at alpha 0.05)
keeps its raw ``p_value`` but stays out of the family (no ``p_holm``, no marker): 24 such tests
on 3 fixture episodes would otherwise multiply every other p by 72 / 48. The family's p-values
are adjusted together with Holm's step-down correction (``metrics.bootstrap.holm``), across the
table or, with ``significance.family: column``, within each column (the cross-paper matrix: its
columns are separate settings on separate data, and one family of 71 tests would ask a 10-episode
column for p <= 0.05 / 71, below the 2^(1-10) = 0.002 its exact test can give); a cell is
significant when its adjusted p <= alpha. The notes name the family (its rows, columns, metrics
and size) and what was left out and why.

A family can also be too large to reject anything: Holm's first step asks the smallest p for
alpha / m, and in the best case (every test at its floor) the smallest adjusted p is m times the
smallest floor (``best_p_holm``). 468 tests on 10 episodes give at best 468 * 2^(-9) = 0.914. Such
a family keeps its p_value and p_holm in the csv, and the notes say, first, that no cell can be
marked, with m, the episodes and the best attainable p_holm, so that an unmarked cell reads as
"no test here could reject", not as "no difference". A table whose columns are separate
questions can choose ``family: column`` instead, where each column's family may be small enough.

Cells on the project's fixtures (``§``) are never tested: a fixture is a pipeline check, not
data a claim can rest on. Cells without per-episode statistics (MAUVE, Distinct-n,
question-session cells) get no test either, and the notes say so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import replace

from recallbench.metrics.bootstrap import holm
from recallbench.metrics.clusters import Additive, ClusterStatistic, MeanOf
from recallbench.metrics.signflip import sign_flip_floor
from recallbench.tables.cell import FIXTURE, SIGNIFICANT, Cell
from recallbench.tables.intervals import Found
from recallbench.tables.significance import Settings, Tested, pair_test

__all__ = ["best_p_holm", "mark_significance", "min_attainable_p"]


def min_attainable_p(n_clusters: int, n_resamples: int | None = None) -> float:
    """The smallest two-sided p of a sign-flip test on ``n_clusters`` episodes that differ.

    Exact (``n_resamples`` None): the observed assignment and its mirror are 2 of the 2^n, so
    p >= 2^(1-n); with B random assignments also p >= 2 / (B + 1) (``metrics.signflip``).
    """
    return sign_flip_floor(n_clusters, n_resamples)


def best_p_holm(floors: Sequence[float]) -> float:
    """The smallest p_holm a Holm family can give: every test at its floor (``min_attainable_p``),
    the smallest floor times the family's size m (Holm's first step compares it with alpha / m)."""
    return min(1.0, len(floors) * min(floors)) if floors else 1.0


def _span(values: Sequence[int]) -> str:
    ns = sorted(set(values))
    return str(ns[0]) if len(ns) == 1 else f"{ns[0]}-{ns[-1]}"


def _blocked(settings: Settings, groups: Mapping[str, list[Tested]]) -> list[str]:
    """Notes for the Holm families that cannot reject even at their floors (none: all can)."""
    out = []
    for name, tests in groups.items():
        floors = [t.floor for t in tests]
        best = best_p_holm(floors)
        if best <= settings.alpha:
            continue
        where = f"column {name}" if name else "this table"
        out.append(
            f"NO CELL OF {where.upper()} CAN BE MARKED: its Holm family has m = {len(tests)} "
            f"tests on {_span([t.n_clusters for t in tests])} episode clusters (of which "
            f"{_span([t.informative for t in tests])} differ between the two rows); even with "
            f"every test at its smallest attainable p ({min(floors):.3g}) the best p_holm is "
            f"{best:.3g} > alpha = {settings.alpha}; an unmarked cell here is untestable at "
            "this size, not evidence of no difference"
        )
    return out


def _never(settings: Settings, cells: Sequence[Cell], tests: Sequence[Tested]) -> list[str]:
    """One note per cell of a Holm family that can reject elsewhere but never at this cell:
    even with every test of the family at its floor, Holm gives this one p_holm > alpha (Holm
    is monotone, so no data can do better). Families that can reject nowhere: ``_blocked``."""
    best = holm([t.floor for t in tests])
    if min(best, default=1.0) > settings.alpha:
        return []
    return [
        f"cannot be marked: {c.row} / {c.column} ({c.metric}): {t.informative} of its "
        f"{t.n_clusters} shared episodes differ, so its p is >= {t.floor:.3g} and, with every "
        f"test of its Holm family (m = {len(tests)}) at its floor, its p_holm >= {h:.3g} > "
        f"alpha = {settings.alpha}; unmarked here is untestable, not evidence of no difference"
        for c, t, h in zip(cells, tests, best, strict=True)
        if h > settings.alpha
    ]


def _fingerprint(stat: ClusterStatistic | None) -> Hashable:
    """Equal for statistics holding the same data (the same test twice, e.g. an Avg. column
    that pools one dataset is that dataset's column)."""
    if isinstance(stat, Additive):
        present = None if stat.present is None else stat.present.tobytes()
        return (stat.ids, stat.matrix.tobytes(), repr(sorted(stat.spec.items())), present)
    if isinstance(stat, MeanOf):
        return ("mean", stat.ids, tuple(_fingerprint(p) for p in stat.parts))
    return ("object", id(stat))


def _test_key(row: str, found: Sequence[Found], base: Sequence[Found]) -> Hashable:
    def side(cell: Sequence[Found]) -> Hashable:
        return tuple((f.stratum, f.n, _fingerprint(f.stat)) for f in cell if f.n > 0)

    return (row, side(found), side(base))


def _untestable(cell: Cell, base_cell: Cell | None) -> str | None:
    """Why ``cell`` is not tested against its reference cell at all (None: it is)."""
    if cell.coverage == FIXTURE or (base_cell is not None and base_cell.coverage == FIXTURE):
        return "fixture data"
    return None


def mark_significance(
    cells: list[Cell], found: Mapping[tuple[str, str, str], Sequence[Found]], settings: Settings
) -> list[str]:
    """Set p_value/p_holm/significant on ``cells`` in place; return the notes for the table.

    ``found`` maps (row, column, metric) to the runs' numbers behind each cell. A test that
    another cell already holds (the same row and runs on both sides) enters the family once and
    its result is copied to the other cell.
    """
    by_key = {(c.row, c.column, c.metric): c for c in cells}
    results: dict[int, Tested] = {}
    first: dict[Hashable, int] = {}  # a test's key -> the cell that holds it in the family
    twins: dict[int, int] = {}  # a cell whose test another cell holds -> that cell
    skipped: dict[str, list[Cell]] = {}
    for i, cell in enumerate(cells):
        ref = settings.reference_of(cell.row)
        if ref is None or cell.ours is None:
            continue
        base = found.get((ref, cell.column, cell.metric)) or []
        mine = found.get((cell.row, cell.column, cell.metric)) or []
        why = _untestable(cell, by_key.get((ref, cell.column, cell.metric)))
        if why is None and not base:
            why = "the reference row has no value"
        if why is None:
            key = _test_key(cell.row, mine, base)
            if key in first:
                twins[i] = first[key]
                continue
            got = pair_test(mine, base, settings)
            why = got if isinstance(got, str) else None
            if why is None:
                results[i] = got  # type: ignore[assignment]
                first[key] = i
        if why is not None:
            skipped.setdefault(why, []).append(cell)
    family = {i: t for i, t in results.items() if t.floor <= settings.alpha}
    groups: dict[str, list[int]] = {}  # one Holm correction per table, or per column
    for i in family:
        groups.setdefault(cells[i].column if settings.family == "column" else "", []).append(i)
    for members in groups.values():
        adjusted = holm([family[i].p_value for i in members])
        for i, p in zip(members, adjusted, strict=True):
            cells[i] = replace(
                cells[i], p_value=family[i].p_value, p_holm=p, significant=bool(p <= settings.alpha)
            )
    for i, t in results.items():
        if i not in family:
            cells[i] = replace(cells[i], p_value=t.p_value)
    for i, j in twins.items():
        held = cells[j]
        cells[i] = replace(
            cells[i], p_value=held.p_value, p_holm=held.p_holm, significant=held.significant
        )
    out = [cells[i] for i in family]
    left = [(cells[i], results[i]) for i in results if i not in family]
    blocked = _blocked(settings, {k: [family[i] for i in v] for k, v in groups.items()})
    never = [
        note
        for members in groups.values()
        for note in _never(settings, [cells[i] for i in members], [family[i] for i in members])
    ]
    notes = _notes(settings, list(family.values()), out, left, skipped)
    return blocked + notes + never + _twin_notes(cells, twins)


def _twin_notes(cells: Sequence[Cell], twins: Mapping[int, int]) -> list[str]:
    """Which cells repeat another cell's test (counted once in the Holm family)."""
    pairs: dict[tuple[str, str], list[str]] = {}
    for i, j in twins.items():
        dup, held = cells[i], cells[j]
        key = (f"{dup.column} / {dup.metric}", f"{held.column} / {held.metric}")
        pairs.setdefault(key, []).append(dup.row)
    return [
        f"counted once: {dup} repeats {held}'s test (the same per-episode statistics on both "
        f"sides) in {len(rows)} row(s) ({_names(rows)}): one test, counted once toward the "
        "Holm family (when it enters it), its p shown in both cells"
        for (dup, held), rows in pairs.items()
    ]


def _names(values: Sequence[str]) -> str:
    """Distinct names in order; "; " between them when a name holds a comma ("Memory turns,
    Session 2")."""
    names = list(dict.fromkeys(values))
    return ("; " if any("," in n for n in names) else ", ").join(names)


def _scope(settings: Settings, family: list[Cell]) -> str:
    """What one Holm correction spans, in words."""
    if settings.family != "column":
        return "across the table's family"
    each = "; ".join(f"{col}: {n}" for col, n in Counter(c.column for c in family).items())
    return f"within each column, a family of its own (tests per column: {each})"


def _test_words(settings: Settings, tested: list[Tested]) -> str:
    """The tests, their settings and the seed, in words."""
    tests = "; ".join(sorted({t.test for t in tested}))
    out = f"{tests}; seed {settings.bootstrap.seed}"
    if any(t.exact for t in tested):
        out += f"; exact when at most {settings.exact_up_to} episodes differ"
    if any("Monte Carlo" in t.test for t in tested):
        floor = 2 / (settings.n_permutations + 1)
        out += (
            f"; above {settings.exact_up_to} episodes that differ the floor is the random "
            f"assignments' ({floor:.2g}), not the data's"
        )
    if any("bootstrap" in t.test for t in tested):
        out += f"; bootstrap: {settings.bootstrap.n_resamples} resamples"
    return out


def _notes(
    settings: Settings,
    tested: list[Tested],
    family: list[Cell],
    left: list[tuple[Cell, Tested]],
    skipped: dict[str, list[Cell]],
) -> list[str]:
    if not family:
        notes = [
            f"no {SIGNIFICANT} marker: no test against {settings.describe()} entered the Holm "
            "family (0 paired tests; why below)"
        ]
    else:
        notes = [
            f"{SIGNIFICANT} = differs from {settings.describe()} "
            f"(p_holm <= {settings.alpha}): {len(tested)} paired tests by "
            f"{settings.pair_by} ({_test_words(settings, tested)}), "
            f"Holm-corrected {_scope(settings, family)} (p_value, p_holm in the csv)",
            f"Holm {'families' if settings.family == 'column' else 'family'} ({len(family)} "
            f"tests): rows {_names([c.row for c in family])} x "
            f"columns {_names([c.column for c in family])} x metrics "
            f"{_names([c.metric for c in family])}, each against its reference row",
        ]
    if left:
        ks = [t.informative for _, t in left]
        notes.append(
            f"left out of the Holm family: {len(left)} tests on "
            f"{', '.join(map(str, sorted({t.n_clusters for _, t in left})))} shared episode(s), "
            f"of which {', '.join(map(str, sorted(set(ks))))} differ between the two rows "
            f"(columns {_names([c.column for c, _ in left])}): a sign-flip test's smallest "
            f"attainable p is 2^(1-k) over the k episodes that differ (the smallest here: "
            f"{min(t.floor for _, t in left):.3g}), above alpha = {settings.alpha}, so they "
            "could never be significant; their raw p_value is in the csv, no p_holm"
        )
    notes += [
        f"no test ({why}): {len(c)} cells, columns {_names([x.column for x in c])} x metrics "
        f"{_names([x.metric for x in c])}"
        for why, c in sorted(skipped.items())
    ]
    return notes
