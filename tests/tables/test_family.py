"""Holm families that cannot reject: LoCoMo Table 1's shape (18 rows against No memory x 26
columns = 468 tests on 10 conversations) is one family that no cell can pass even when every
test is at its floor, so the table says so; per column (18 tests) the same data can be marked."""

from __future__ import annotations

import numpy as np
import pytest

from recallbench.metrics.bootstrap import RATIO, Additive, Bootstrap
from recallbench.tables.cell import Cell
from recallbench.tables.family import best_p_holm, mark_significance, min_attainable_p
from recallbench.tables.intervals import Found
from recallbench.tables.significance import Settings

ROWS = ["No memory", *(f"Method {k}" for k in range(18))]
COLUMNS = [f"F1 c{k}" for k in range(26)]
EPISODES = [f"conv-{k}" for k in range(10)]


def found(shift: float, seed: int = 7) -> Found:
    """A cell on 10 episodes x 4 items; ``shift`` moves every episode the same way; each
    ``seed`` is other data (the same data in two cells would be one test counted once)."""
    rng = np.random.default_rng(seed)
    values = rng.uniform(0.1, 0.3, 40) + shift
    episodes = [EPISODES[i // 4] for i in range(40)]
    stat = Additive.from_items(episodes, [[v, 1.0] for v in values], RATIO)
    return Found(float(values.mean()), 40, episodes=10, stat=stat)


def locomo_shaped(family: str) -> tuple[list[Cell], list[str]]:
    # every method beats No memory by 0.4 on every episode: each exact sign-flip test sits at
    # its floor 2^(1-10) = 0.00195, the best case a family can have
    table = {
        (r, c, "F1"): [found(0.0 if r == ROWS[0] else 0.4, seed=k)]
        for r in ROWS
        for k, c in enumerate(COLUMNS)
    }
    cells = [Cell(r, c, m, f[0].value, None, n=40, episodes=10) for (r, c, m), f in table.items()]
    settings = Settings(ROWS[0], bootstrap=Bootstrap(n_resamples=2000, seed=0), family=family)
    notes = mark_significance(cells, table, settings)
    return cells, notes


def test_best_p_holm_by_hand():
    floor = min_attainable_p(10, 2000)
    assert floor == pytest.approx(2**-9)
    assert best_p_holm([floor] * 468) == pytest.approx(468 / 512)  # 0.914
    assert best_p_holm([floor] * 18) == pytest.approx(18 / 512)  # 0.035
    assert best_p_holm([0.5, 0.01, 0.2]) == pytest.approx(0.03)
    assert best_p_holm([0.4] * 3) == 1.0 and best_p_holm([]) == 1.0


def test_a_468_test_family_on_10_clusters_says_no_cell_can_be_marked():
    cells, notes = locomo_shaped("table")
    tested = [c for c in cells if c.p_holm is not None]
    assert len(tested) == 468 and not any(c.significant for c in tested)
    assert min(c.p_value for c in tested) == pytest.approx(2**-9)
    assert min(c.p_holm for c in tested) == pytest.approx(468 / 512)
    assert notes[0].startswith("NO CELL OF THIS TABLE CAN BE MARKED")
    assert "m = 468 tests on 10 episode clusters" in notes[0]
    assert "(0.00195)" in notes[0] and "best p_holm is 0.914 > alpha = 0.05" in notes[0]


def test_the_same_tests_in_column_families_can_be_marked():
    cells, notes = locomo_shaped("column")
    tested = [c for c in cells if c.p_holm is not None]
    assert len(tested) == 468 and all(c.significant for c in tested)
    assert max(c.p_holm for c in tested) == pytest.approx(18 / 512)
    assert not any("CAN BE MARKED" in n for n in notes)


def test_only_the_columns_that_cannot_reject_are_named():
    # column A on 10 episodes can reject (18 x 2^-9 = 0.035); column B keeps 6 episodes: each
    # test's floor 2^(1-6) = 0.03125 is below alpha (it enters the family), 18 of them 0.5625
    table = {}
    for r in ROWS:
        for c in ("A", "B"):
            f = found(0.0 if r == ROWS[0] else 0.4, seed=ROWS.index(r))
            if c == "B":  # keep 6 of the 10 episodes
                keep = EPISODES[:6]
                rng = np.random.default_rng(100 + ROWS.index(r))
                values = rng.uniform(0.1, 0.3, 24) + (0.0 if r == ROWS[0] else 0.4)
                eps = [keep[i // 4] for i in range(24)]
                stat = Additive.from_items(eps, [[v, 1.0] for v in values], RATIO)
                f = Found(float(values.mean()), 24, episodes=6, stat=stat)
            table[(r, c, "F1")] = [f]
    cells = [Cell(r, c, m, f[0].value, None) for (r, c, m), f in table.items()]
    notes = mark_significance(cells, table, Settings(ROWS[0], family="column"))
    blocked = [n for n in notes if "CAN BE MARKED" in n]
    assert blocked == [
        "NO CELL OF COLUMN B CAN BE MARKED: its Holm family has m = 18 tests on 6 episode "
        "clusters (of which 6 differ between the two rows); even with every test at its smallest attainable p (0.0312) the best p_holm "
        "is 0.562 > alpha = 0.05; an unmarked cell here is untestable at this size, not "
        "evidence of no difference"
    ]
    assert all(c.significant for c in cells if c.column == "A" and c.row != ROWS[0])


def shifted(episodes: int, shift: float, seed: int, tie: int = 0) -> Found:
    """``episodes`` x 4 items; the first ``tie`` episodes hold the same items in every row."""
    rng = np.random.default_rng(seed)
    values = rng.uniform(0.1, 0.3, 4 * episodes) + shift
    values[: 4 * tie] = np.random.default_rng(99).uniform(0.1, 0.3, 4 * tie)
    ids = [f"conv-{i // 4}" for i in range(4 * episodes)]
    stat = Additive.from_items(ids, [[v, 1.0] for v in values], RATIO)
    return Found(float(values.mean()), 4 * episodes, episodes=episodes, stat=stat)


def test_a_family_that_mixes_cluster_counts_names_the_cells_that_can_never_be_marked():
    # one test on 20 episodes (Monte Carlo floor 2e-5) and two on 6 (exact floor 2^-5): at their
    # floors Holm gives 6e-5, then 2 x 0.03125 = 0.0625 for both 6-episode cells
    table = {
        ("Base", "A", "F1"): [shifted(20, 0.0, 1)],
        ("M", "A", "F1"): [shifted(20, 0.4, 2)],
        ("Base", "B", "F1"): [shifted(6, 0.0, 3)],
        ("M", "B", "F1"): [shifted(6, 0.4, 4)],
        ("Base", "C", "F1"): [shifted(6, 0.0, 5)],
        ("M", "C", "F1"): [shifted(6, 0.4, 6)],
    }
    cells = [Cell(r, c, m, f[0].value, None) for (r, c, m), f in table.items()]
    notes = mark_significance(cells, table, Settings("Base"))
    never = [n for n in notes if n.startswith("cannot be marked")]
    assert [n.split(":")[1].strip() for n in never] == ["M / B (F1)", "M / C (F1)"]
    assert "6 of its 6 shared episodes differ, so its p is >= 0.0312" in never[0]
    assert "its p_holm >= 0.0625 > alpha = 0.05" in never[0]
    by = {c.column: c for c in cells if c.row == "M"}
    assert by["A"].significant is True and by["B"].significant is False
    assert not any("CAN BE MARKED" in n for n in notes)


def test_tied_episodes_lower_no_floor_and_can_leave_the_family():
    # 10 episodes, 5 alike in both rows: floor 2^(1-5) = 0.0625 > 0.05, out of the family
    table = {("Base", "A", "F1"): [shifted(10, 0.0, 1, tie=5)]}
    table[("M", "A", "F1")] = [shifted(10, 0.4, 2, tie=5)]
    cells = [Cell(r, c, m, f[0].value, None) for (r, c, m), f in table.items()]
    notes = mark_significance(cells, table, Settings("Base"))
    m = next(c for c in cells if c.row == "M")
    assert m.p_value == pytest.approx(2**-4) and m.p_holm is None
    assert any("10 shared episode(s), of which 5 differ" in n for n in notes)


def test_a_column_that_repeats_another_columns_test_is_counted_once():
    # THEANINE Table 4: Avg. pools MSC with a fixture left out, so Avg. is MSC's test again
    table = {}
    for col in ("MSC", "Avg."):
        table[("Base", col, "SR")] = [shifted(20, 0.0, 1)]
        for k, row in enumerate(("M1", "M2")):
            table[(row, col, "SR")] = [shifted(20, 0.4, 2 + k)]
    cells = [Cell(r, c, m, f[0].value, None) for (r, c, m), f in table.items()]
    notes = mark_significance(cells, table, Settings("Base"))
    by = {(c.row, c.column): c for c in cells}
    assert any("Holm family (2 tests)" in n for n in notes)
    for row in ("M1", "M2"):
        assert by[row, "Avg."].p_holm == by[row, "MSC"].p_holm == pytest.approx(4 / 100_000)
        assert by[row, "Avg."].significant is True
    assert any(
        n.startswith("counted once: Avg. / SR repeats MSC / SR's test") and "(M1, M2)" in n
        for n in notes
    )
