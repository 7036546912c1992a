"""A rendered table is keyed on the run folders it listed, not on every run (issue 38).

``recallbench-table`` skips rendering when nothing the table read changed
(``cli.table.rendered_before``); what it read is what ``find_runs``/``runs_in`` listed while
it rendered (``analysis.runs.reading_runs``). The end-to-end check is
``tests/test_end_to_end.py::test_a_table_whose_inputs_did_not_change_is_not_rendered_again``.
"""

from __future__ import annotations

from pathlib import Path

from recallbench.analysis import find_runs, runs_in
from recallbench.analysis.runs import reading_runs
from recallbench.cli.table import _result_files


def _run(folder: Path) -> Path:
    (folder / "items").mkdir(parents=True)
    (folder / "run.json").write_text('{"status": "finished"}')
    (folder / "summary.json").write_text("{}")
    (folder / "items" / "e1.jsonl").write_text("{}\n")
    return folder


def test_a_table_reads_the_folders_it_listed_and_their_runs_own_files(tmp_path):
    results = tmp_path / "results"
    mine = _run(results / "runs" / "mine" / "20260101-000000" / "a")
    theirs = _run(results / "runs" / "theirs" / "20260101-000000" / "b")
    (results / "runs" / "mine" / "plan.json").write_text("{}")
    outside = _run(tmp_path / "elsewhere" / "sweep" / "c")
    (results / "cache").mkdir()
    (results / "cache" / "llm.sqlite").write_text("")

    with reading_runs() as reads:
        assert [r.job for r in find_runs(results, "mine")] == ["a"]
        assert [r.job for r in runs_in(tmp_path / "elsewhere")] == ["c"]
    assert reads == {str((results / "runs" / "mine").resolve()),
                     str((tmp_path / "elsewhere").resolve())}  # fmt: skip

    files = set(_result_files(results.resolve(), reads))
    assert str(mine.resolve() / "summary.json") in files
    assert str((results / "runs" / "mine" / "plan.json").resolve()) in files
    assert str(outside.resolve() / "run.json") in files  # a folder table.runs names
    assert not any(str(theirs.resolve()) in f for f in files)  # another experiment's runs
    assert not any("/items/" in f or "/cache/" in f for f in files)

    with reading_runs() as every:
        find_runs(results)  # a table over every tag
    assert str(theirs.resolve() / "summary.json") in _result_files(results.resolve(), every)


def test_reads_outside_a_block_are_not_collected(tmp_path):
    _run(tmp_path / "runs" / "t" / "s" / "j")
    with reading_runs() as reads:
        pass
    find_runs(tmp_path, "t")
    assert reads == set()
