"""Identical rows and flat sweeps are said in a note, with the memory activity behind each row."""

from __future__ import annotations

import json

from recallbench.analysis import find_runs
from recallbench.tables.cell import Cell
from recallbench.tables.sameness import flat_spread, identical_groups, sameness_notes


def cells(rows: dict[str, list[float | None]]) -> list[Cell]:
    return [
        Cell(row, f"S{j}", "f1", value, None)
        for row, values in rows.items()
        for j, value in enumerate(values)
    ]


def values(rows):
    return {
        r: {(f"S{j}", "f1"): v for j, v in enumerate(vs) if v is not None} for r, vs in rows.items()
    }


def test_identical_rows_are_grouped_with_their_share_of_equal_cells():
    rows = {
        "Memory accumulate": [1.0, 2.0, 3.0, 4.0],
        "Memory update": [1.0, 2.0, 3.0, 4.5],  # equal in 3 of 4
        "Without memory": [0.5, 2.5, 1.0, 4.0],  # equal to the others in 1 of 4
        "Paper only": [None, None, None, None],
    }
    assert identical_groups(values(rows)) == [(["Memory accumulate", "Memory update"], 3, 4)]
    assert flat_spread(values(rows)) is None


def test_a_flat_sweep_within_one_percent():
    rows = {"0": [0.2066, 0.139], "0.1": [0.2064, 0.139], "0.5": [0.2062, 0.139]}
    spread, key = flat_spread(values(rows))
    assert key == ("S0", "f1") and spread == (0.2066 - 0.2062) / 0.2066
    assert flat_spread(values({"a": [1.0], "b": [1.02], "c": [1.0]})) is None  # 2% apart
    assert flat_spread(values({"a": [1.0], "b": [1.0]})) is None  # 2 rows are no sweep


def test_notes_carry_the_memory_activity_of_each_row(tmp_path, make_run):
    activity = {
        "totals": {
            "episodes": 2,
            "written": 0,
            "updated": 0,
            "deleted": 0,
            "store": 0,
            "retrieved": 0,
            "recalls": 10,
            "empty_recalls": 10,
        },
        "per_session": {"1": {"episodes": 2}, "2": {"episodes": 2}},
    }
    for job in ("timerag", "no_memory"):
        run = make_run(tmp_path, "t", job, {"memory": job}, {})
        summary = json.loads((run / "summary.json").read_text())
        (run / "summary.json").write_text(json.dumps({**summary, "memory": activity}))
    by_job = {r.job: r for r in find_runs(tmp_path, "t")}
    rows = {"No-Memory": [0.54, 0.35], "TimeRAG-Memory (ours)": [0.54, 0.35]}
    notes = sameness_notes(
        cells(rows),
        {"No-Memory": [by_job["no_memory"]], "TimeRAG-Memory (ours)": [by_job["timerag"]]},
    )
    assert len(notes) == 1
    note = notes[0]
    assert note.startswith(
        "IDENTICAL ROWS: 'No-Memory', 'TimeRAG-Memory (ours)' are equal in 2 of 2"
    )
    assert "TimeRAG-Memory (ours): 0 records written (0.0 per episode-session)" in note
    assert "0.0 items per recall (10 of 10 empty)" in note
    assert "their memories did exactly the same" in note
    assert sameness_notes(cells({"a": [1.0, 2.0], "b": [1.5, 2.5]}), {}) == []


def test_activity_is_recomputed_for_runs_recorded_before_it(tmp_path, make_run):
    run = make_run(tmp_path, "t", "old", {"memory": "lufy"}, {})
    (run / "memory").mkdir()
    item = {"item_id": "a", "text": "x", "kind": "fact", "created": None}
    (run / "memory" / "e1.jsonl").write_text(json.dumps({"after_session": 1, "items": [item]}))
    notes = sameness_notes(
        cells({"A": [1.0, 2.0], "B": [1.0, 2.0]}),
        {"A": [r for r in find_runs(tmp_path, "t") if r.job == "old"], "B": []},
    )
    assert (
        "A: 1 records written (1.0 per episode-session), 0 updated, 0 deleted or retired, "
        "0 returned to memory over 1 episodes" in notes[0]
    )


def test_a_flat_sweep_is_one_note_not_also_an_identical_group():
    rows = {"10": [0.206, 0.139], "20": [0.206, 0.139], "40": [0.206, 0.139]}
    notes = sameness_notes(cells(rows), {})
    assert len(notes) == 1 and notes[0].startswith("FLAT: all 3 rows stay within 1%")
    assert "all equal in 2 of 2 cells" in notes[0]
    assert "the table's builder did not map these rows to their runs" in notes[0]


def test_a_column_printed_the_same_in_every_row_gets_a_note():
    rows = {
        "THEANINE": [0.30, 97.681],
        "COMEDY": [0.02, 97.684],  # printed 97.68 too (digits=2)
        "MemoChat": [0.10, 97.679],
        "Paper only": [None, None],
    }
    got = sameness_notes(cells(rows), {})
    assert got == [
        "CONSTANT COLUMN: S1 / f1 is 97.68 in all 3 rows: no row differs from another in this column"
    ]
    rows["MemoChat"][1] = 90.0  # one row differs: no note
    assert sameness_notes(cells(rows), {}) == []
    two = sameness_notes(cells({"a": [1.0, 2.0, 5.0], "b": [3.0, 2.0, 4.0]}), {})
    assert not any(n.startswith("CONSTANT") for n in two)  # a column needs 3 rows


def test_a_summary_written_under_the_old_live_rule_is_recomputed(tmp_path, make_run):
    # the summary's memory entry was computed by another rule (its method string differs): the
    # table recomputes from the snapshots, where LUFY's forgotten item is gone (issue 44)
    stale = {"totals": {"episodes": 1, "written": 9, "store": 9}, "method": "old rule"}
    run = make_run(tmp_path, "t", "stale", {"memory": "lufy"}, {})
    summary = json.loads((run / "summary.json").read_text())
    (run / "summary.json").write_text(json.dumps({**summary, "memory": stale}))
    (run / "memory").mkdir()
    items = [
        {"item_id": "a", "text": "x", "kind": "fact", "created": None},
        {
            "item_id": "b",
            "text": "y",
            "kind": "fact",
            "created": None,
            "attrs": {"retained": False},
        },
    ]
    (run / "memory" / "e1.jsonl").write_text(json.dumps({"after_session": 1, "items": items}))
    notes = sameness_notes(
        cells({"A": [1.0, 2.0], "B": [1.0, 2.0]}),
        {"A": [r for r in find_runs(tmp_path, "t") if r.job == "stale"], "B": []},
    )
    assert "A: 2 records written (2.0 per episode-session), 0 updated, 1 deleted" in notes[0]
    assert "1.0 live per episode at the end" in notes[0]
