"""The fast part of the golden tables, in ``make test``: a few reproduce targets on the fixtures.

``tests/golden/golden.py`` runs every offline ``make reproduce-*`` target exactly as a user runs
it and compares each produced CSV with the one recorded in ``tests/golden/tables/``; the whole set
is ``make golden`` (slow: every sweep). This test runs the targets of :data:`FAST` — a data-only
table, a sweep with the tables that reuse its runs, a judge-agreement table — and compares what
they produce the same way, so a change that moves a table value fails the default suite too.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import golden  # noqa: E402

# Each produces: lufy_table1 | carecall_table3, carecall_table2 | caim_table3, caim_table2,
# caim_table4 (the later targets of a line reuse the first one's runs).
FAST = [
    "reproduce-table-lufy-1",
    "reproduce-table-carecall-3",
    "reproduce-table-carecall-2",
    "reproduce-table-caim-3",
    "reproduce-table-caim-2",
    "reproduce-table-caim-4",
]
EXPECTED = {
    "lufy_table1",
    "carecall_table3",
    "carecall_table2",
    "caim_table3",
    "caim_table2",
    "caim_table4",
}


def test_fast_golden_targets_reproduce_their_recorded_tables(tmp_path, monkeypatch):
    monkeypatch.setenv("GOLDEN_VENV", sys.prefix)  # the venv this suite runs in
    monkeypatch.delenv("RECALLBENCH_STAMP", raising=False)
    golden.run_targets(tmp_path, FAST)
    produced = {p.stem for p in (tmp_path / "tables").glob("*.csv")}
    assert EXPECTED <= produced, f"not produced: {sorted(EXPECTED - produced)}"
    diffs = [
        d
        for name in sorted(EXPECTED)
        for d in golden.compare(golden.GOLDEN / f"{name}.csv", tmp_path / "tables" / f"{name}.csv")
    ]
    assert not diffs, "\n".join(diffs[:20])


def test_compare_reports_a_moved_cell_and_a_missing_table(tmp_path):
    """The comparison itself can fail: a moved value and an absent table are both reported."""
    import csv

    recorded = golden.GOLDEN / "lufy_table1.csv"
    with recorded.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    row = next(r for r in rows if r["ours"] not in ("", "n/a"))
    row["ours"] = str(float(row["ours"]) + 1.0)
    moved = tmp_path / "lufy_table1.csv"
    with moved.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert any(" ours: " in d for d in golden.compare(recorded, moved))
    assert golden.compare(recorded, tmp_path / "absent.csv") == ["lufy_table1.csv: not produced"]


def test_tolerances_follow_each_columns_arithmetic():
    """Exact columns at the csv's resolution; float32 model columns by their derived bounds."""
    row = {"ours": "0.5", "seed_sd": "", "seeds": ""}
    key_bleu, key_bs = ("r", "c", "Bleu-4"), ("r", "MSC", "BERTScore")
    rel, abs_ = golden.tolerance(key_bleu, "ours", row, row)
    assert not golden.same("0.500000", "0.500002", rel, abs_)  # two units of the 6th decimal
    rel, abs_ = golden.tolerance(key_bs, "ours", row, row)
    assert golden.same("0.734", str(0.734 * (1 + 4e-6)), rel, abs_)  # AVX2-sized move
    assert not golden.same("0.734", str(0.734 * (1 + 1e-4)), rel, abs_)  # a real change
    rel, abs_ = golden.tolerance(("r", "S1", "PPL"), "ours", row, row)
    assert golden.same("23.41", "23.4149", rel, abs_) and not golden.same(
        "23.41", "23.42", rel, abs_
    )
    # MAUVE over 10 seeds with sd 1.2 on both sides: 3 * sqrt(2 * 1.44) / sqrt(10) = 1.61
    seeded = {"ours": "77.0", "seed_sd": "1.2", "seeds": "10"}
    rel, abs_ = golden.tolerance(("r", "MSC", "Mauve"), "ours", seeded, seeded)
    assert abs_ == pytest.approx(1.61, abs=0.01)
    assert golden.same("77.0", "78.5", rel, abs_) and not golden.same("77.0", "79.0", rel, abs_)
    # p-values of a float32 column: 1e-4; of an exact column: the csv's resolution
    assert golden.tolerance(key_bs, "p_holm", row, row)[1] == 1e-4
    assert golden.tolerance(key_bleu, "p_holm", row, row)[1] == 1e-6


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__]))
