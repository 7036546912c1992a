"""The engine: ``runs:`` indirection to another experiment's run folders, newest run per job,
header and reference notes, and the factories only the table command provides."""

from __future__ import annotations

import csv
from dataclasses import replace

import pytest

from recallbench.errors import ConfigError
from recallbench.tables import TableContext, load_spec, reproduce


def rows(path):
    with path.open(encoding="utf-8") as fh:
        return {(r["row"], r["column"]): r for r in csv.DictReader(fh)}


def qa(precision: float, n: int) -> dict:
    per_q = {"1/1": {"value": precision, "n": n}}
    return {"precision": {"value": precision, "n": n, "per_question_session": per_q}}


def test_a_table_only_experiment_reads_the_runs_it_names(tmp_path, make_run):
    lufy = {"memory": "lufy"}
    logs = {"dataset": {"options": {"system": "LUFY"}}}
    make_run(tmp_path, "lufy_table11", "lufy", lufy, qa(0.1, 3), stamp="20260101-0", config=logs)
    make_run(tmp_path, "lufy_table11", "lufy", lufy, qa(0.5, 4), stamp="20260102-0", config=logs)
    make_run(tmp_path, "lufy_table16", "lufy", lufy, qa(0.9, 9), config=logs)  # not its runs
    spec = load_spec("lufy_table16")
    paths = reproduce(spec, TableContext(results_dir=tmp_path))
    assert paths["csv"] == tmp_path / "tables" / "lufy_table16.csv"
    got = rows(paths["csv"])["LUFY", "S1 Q1"]
    assert (float(got["ours"]), got["n"], got["paper"]) == (
        50.0,
        "4",
        "80.0",
    )  # newest run; LUFY S1 Q1 in the paper: 80.0
    assert rows(paths["csv"])["Naive RAG", "S1 Q1"]["ours"] == "n/a"
    md = paths["md"].read_text(encoding="utf-8")
    assert "- **runs**: lufy_table11/20260102-0" in md and "- **judge**: none" in md


def test_no_runs_says_which_sweep_to_run(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"runs/caim_table3: run the sweep first"):
        reproduce(load_spec("caim_table4"), TableContext(results_dir=tmp_path))
    with pytest.raises(FileNotFoundError, match=r"recallbench -m experiment=lufy_table13"):
        reproduce(load_spec("lufy_table14"), TableContext(results_dir=tmp_path))


def test_reference_notes_and_spec_notes_are_rendered(tmp_path, make_run):
    retained = {"retained": {"value": 1.0, "n": 1, "per_session": {"1": {"value": 2.0, "n": 1}}}}
    config = {"dataset": {"options": {"system": "LUFY"}}}
    make_run(tmp_path, "lufy_table11", "lufy", {"memory": "lufy"}, retained, config=config)
    md = reproduce(load_spec("lufy_table3"), TableContext(results_dir=tmp_path))["md"]
    text = md.read_text(encoding="utf-8")
    # extractive generator vs the paper's GPT-4o: the paper's value, no difference
    assert "| LUFY | 2.0 (2.8) |" in text
    assert "- **comparability**: not comparable, no diff shown: extractive:" in text
    assert "- paper quirk: The rate is not retained/created" in text  # from reference.yaml
    assert "- **memories**: memories = utterance pairs" in text  # the spec's notes


def test_a_note_named_like_a_header_line_does_not_hide_it(tmp_path, make_run):
    retained = {"retained": {"value": 1.0, "n": 1, "per_session": {"1": {"value": 2.0, "n": 1}}}}
    config = {"dataset": {"name": "lufy", "options": {"system": "LUFY"}}}
    make_run(tmp_path, "lufy_table11", "lufy", {"memory": "lufy"}, retained, config=config)
    spec = replace(load_spec("lufy_table3"), notes={"data": "a note about the data"})
    text = reproduce(spec, TableContext(results_dir=tmp_path))["md"].read_text(encoding="utf-8")
    assert "- **data**: lufy" in text  # the provenance line of the runs
    assert "- **data (note)**: a note about the data" in text


def test_builders_get_models_only_from_the_command(tmp_path, make_run):
    make_run(
        tmp_path,
        "lufy_table11",
        "rag",
        {"memory": "naive_rag"},
        {},
        config={"embedder": {"kind": "hashing"}},
    )
    with pytest.raises(ConfigError, match="needs make_embedder, which only the table command"):
        reproduce(load_spec("lufy_table15"), TableContext(results_dir=tmp_path))


def test_a_table_that_compares_rows_without_a_test_says_so(tmp_path, make_run):
    from pathlib import Path

    from recallbench.tables.context import BuiltTable
    from recallbench.tables.engine import UNTESTED, untested_notes
    from recallbench.tables.render import Cell
    from recallbench.tables.spec import parse_spec

    def spec(**block):
        base = {
            "paper": "theanine",
            "id": "table1",
            "title": "t",
            "rows": [{"label": "A", "memory": "a"}, {"label": "B", "memory": "b"}],
            "columns": [{"label": "MSC", "dataset": "msc"}],
            "metrics": {"rouge_l": {"label": "Rouge-L"}},
        }
        return parse_spec("theanine_table1", Path("x.yaml"), {**base, **block}, own_tag="t")

    cells = [Cell("A", "MSC", "Rouge-L", 0.2, None), Cell("B", "MSC", "Rouge-L", 0.3, None)]
    assert untested_notes(spec(), BuiltTable(cells), cells) == [UNTESTED]
    # declared in the spec, or tested by the builder (the matrix sets its reference itself)
    assert untested_notes(spec(reference_row="A"), BuiltTable(cells), cells) == []
    assert untested_notes(spec(), BuiltTable(cells, tested=True), cells) == []
    # one row with a value of ours compares nothing; rows that are not systems (no rows in the
    # spec, none mapped to runs: a dataset's statistics) neither
    half = [cells[0], Cell("B", "MSC", "Rouge-L", None, 0.3)]
    assert untested_notes(spec(), BuiltTable(half), half) == []
    assert untested_notes(spec(rows=[]), BuiltTable(cells), cells) == []


def test_a_builder_that_tested_some_pairs_gets_the_note_for_the_rest():
    from pathlib import Path

    from recallbench.tables.context import BuiltTable
    from recallbench.tables.engine import untested_notes
    from recallbench.tables.render import Cell
    from recallbench.tables.spec import parse_spec

    spec = parse_spec(
        "lufy_table10",
        Path("x.yaml"),
        {
            "paper": "lufy",
            "id": "table10",
            "title": "t",
            "rows": [{"label": "A", "memory": "a"}, {"label": "B", "memory": "b"}],
            "columns": [{"label": "S1", "session": 1}],
            "metrics": {"sentiment": {"label": "sentiment"}},
        },
        own_tag="t",
    )
    cells = [Cell("A", "S1", "sentiment", 0.2, None), Cell("B", "S1", "sentiment", 0.3, None)]
    built = BuiltTable(cells, tested="the t-tests in the notes (A against each other row)")
    assert untested_notes(spec, built, cells) == [
        "no test between rows beyond the t-tests in the notes (A against each other row): no "
        "other pair of its rows is tested, and a gap between them is not evidence that one "
        "differs from another"
    ]
