"""THE summary-cell builder: n-weighted pooling, where a cell reads a summary, run selection,
per-metric column labels and rows from a sweep, checked by hand on fake run folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from recallbench.analysis import find_runs
from recallbench.tables.cells import pool, summary_cells
from recallbench.tables.spec import parse_spec


def spec(**block):
    base = {"paper": "theanine", "id": "table1", "title": "t"}
    return parse_spec("theanine_table1", Path("x.yaml"), {**base, **block}, own_tag="t")


def entry(value: float, n: int, **extra) -> dict:
    return {"value": value, "n": n, **extra}


@pytest.mark.parametrize(
    ("found", "expected"),
    [
        ([(0.2, 3), (0.6, 1)], (0.3, 4)),  # (0.6 + 0.6) / 4
        ([(0.2, 3), (0.6, 1), (0.9, 0)], (0.3, 4)),  # a number on no item weighs nothing
        ([(0.9, 0)], (None, 0)),
        ([], (None, 0)),
    ],
)
def test_pool_weights_by_items(found, expected):
    value, n = pool(found)
    assert n == expected[1]
    if expected[0] is None:
        assert value is None
    else:
        assert value == pytest.approx(expected[0])


def test_cells_pool_datasets_by_n_and_never_invent(tmp_path, make_run):
    make_run(
        tmp_path,
        "t",
        "msc-mr",
        {"memory": "memory_retrieval", "dataset": "msc"},
        {"bleu4": entry(0.2, 3, session_mean=0.1)},
    )
    make_run(
        tmp_path,
        "t",
        "cc-mr",
        {"memory": "memory_retrieval", "dataset": "cc"},
        {"bleu4": entry(0.6, 1, session_mean=0.5)},
    )
    make_run(
        tmp_path,
        "t",
        "pc-mr",
        {"memory": "memory_retrieval", "dataset": "persona_chat"},
        {"bleu4": entry(0.9, 0)},
    )
    table = spec(
        rows=[
            {"label": "Memory Retrieval", "memory": "memory_retrieval"},
            {"label": "THEANINE", "memory": "theanine"},
        ],
        columns=[
            {"label": "MSC", "dataset": "msc"},
            {"label": "Avg.", "dataset": ["msc", "cc", "persona_chat"]},
            {"label": "Mean", "dataset": ["msc", "cc"], "value": "session_mean"},
        ],
        metrics={"bleu4": {"label": "Bleu-4", "scale": 100}, "mauve": {"label": "Mauve"}},
    )
    cells, used = summary_cells(table, find_runs(tmp_path, "t"))
    by = {(c.row, c.column, c.metric): c for c in cells}
    msc = by["Memory Retrieval", "MSC", "Bleu-4"]
    assert (msc.ours, msc.n, msc.paper, msc.digits) == (pytest.approx(20.0), 3, 1.92, 2)
    avg = by["Memory Retrieval", "Avg.", "Bleu-4"]
    assert (avg.ours, avg.n) == (pytest.approx(30.0), 4)  # (0.2 * 3 + 0.6 * 1) / 4, pc has n = 0
    mean = by["Memory Retrieval", "Mean", "Bleu-4"]
    assert mean.ours == pytest.approx(100 * (0.1 * 3 + 0.5 * 1) / 4)  # the column's own field
    assert (by["THEANINE", "MSC", "Bleu-4"].ours, by["THEANINE", "MSC", "Bleu-4"].n) == (None, 0)
    assert by["Memory Retrieval", "MSC", "Mauve"].ours is None  # metric not in the summary
    assert len(used) == 3
    # THEANINE layout: a row's columns in order, each holding its metrics
    assert [(c.column, c.metric) for c in cells[:3]] == [
        ("MSC", "Bleu-4"),
        ("MSC", "Mauve"),
        ("Avg.", "Bleu-4"),
    ]


def test_sessions_question_sessions_and_per_metric_labels(tmp_path, make_run):
    qa = {
        m: entry(
            0.5,
            6,
            session_mean=0.4,
            per_session={"1": {"value": 0.3, "n": 3}},
            per_question_session={"2/1": {"value": 0.25, "n": 4}},
        )
        for m in ("precision", "recall")
    }
    make_run(
        tmp_path,
        "t",
        "lufy",
        {"memory": "lufy"},
        qa,
        config={"dataset": {"options": {"system": "LUFY"}}},
    )
    make_run(
        tmp_path,
        "t",
        "lufy-on-rag",
        {"memory": "lufy"},
        {"precision": entry(0.9, 9)},
        config={"dataset": {"options": {"system": "Naive RAG"}}},
    )
    table = spec(
        column_label="{metric} {column}",
        value="session_mean",
        rows=[{"label": "LUFY", "memory": "lufy", "logs": "LUFY"}],
        columns=[
            {"label": "S1", "session": 1},
            {"label": "S2 Q1", "qsession": "2/1"},
            {"label": "S3", "session": 3},
            {"label": "Avg."},
        ],
        metrics={
            "precision": {"label": "P", "scale": 100, "digits": 1},
            "recall": {"label": "R", "scale": 100, "digits": 1},
        },
    )
    cells, used = summary_cells(table, find_runs(tmp_path, "t"))
    assert [c.column for c in cells] == [
        "P S1",
        "P S2 Q1",
        "P S3",
        "P Avg.",
        "R S1",
        "R S2 Q1",
        "R S3",
        "R Avg.",
    ]
    by = {c.column: c for c in cells}
    assert (by["P S1"].ours, by["P S1"].n) == (pytest.approx(30.0), 3)
    assert (by["R S2 Q1"].ours, by["R S2 Q1"].n) == (pytest.approx(25.0), 4)
    assert (by["P S3"].ours, by["P S3"].n) == (None, 0)
    assert by["P Avg."].ours == pytest.approx(40.0)  # session_mean; the Naive RAG logs' run is out
    assert [r.job for r in used] == ["lufy"]


def test_rows_from_a_swept_config_value(tmp_path, make_run):
    for threshold, f1 in ((0.8, 0.2), (0.5, 0.4)):
        make_run(
            tmp_path,
            "t",
            f"t{threshold}",
            {"memory": "naive_rag"},
            {"f1": entry(0.0, 2, session_mean=f1)},
            config={"memory": {"threshold": threshold}},
        )
    table = spec(
        rows_by="memory.threshold",
        columns=[{"label": "Avg.", "value": "session_mean"}],
        metrics={"f1": {"label": "F1", "scale": 100}},
    )
    cells, _ = summary_cells(table, find_runs(tmp_path, "t"))
    assert [(c.row, round(c.ours, 6)) for c in cells] == [("0.50", 40.0), ("0.80", 20.0)]


def test_a_session_column_no_run_scored_says_why(tmp_path, make_run):
    # TimeRAG Fig. 4: the MSC copy has 4 sessions per episode, so a Session 5 column is n/a
    from recallbench.tables.cells import summary_table
    from recallbench.tables.engine import TableContext

    per = {str(s): {"value": 0.1 * s, "n": 4} for s in (2, 3, 4)}
    for memory in ("a", "b"):
        make_run(
            tmp_path,
            "t",
            memory,
            {"memory": memory},
            {"recall_at_5": entry(0.3, 12, per_session=per)},
        )
    table = spec(
        rows=[{"label": "A", "memory": "a"}, {"label": "B", "memory": "b"}],
        columns=[{"label": "Session 4", "session": 4}, {"label": "Session 5", "session": 5}],
        metrics={"recall_at_5": {"label": "Recall@5"}},
    )
    built = summary_table(table, TableContext(tmp_path, runs=tuple(find_runs(tmp_path, "t"))))
    assert built.notes == [
        "Session 5: n/a in every row: no run of this table scored session 5 (the runs score "
        "sessions 2, 3, 4); the episodes of the data they ran on end before session 5"
    ]
    assert {c.column for c in built.cells if c.ours is not None} == {"Session 4"}


def test_per_metric_session_columns_are_matched_by_their_own_label(tmp_path, make_run):
    # LUFY Table 11's columns read "Precision S1", ...: a scored session is no empty column
    from recallbench.tables.cells import summary_table
    from recallbench.tables.engine import TableContext

    per = {str(s): {"value": 0.1 * s, "n": 4} for s in (1, 2)}
    for memory in ("a", "b"):
        make_run(
            tmp_path,
            "t",
            memory,
            {"memory": memory},
            {m: entry(0.3, 8, per_session=per) for m in ("precision", "recall")},
        )
    table = spec(
        rows=[{"label": "A", "memory": "a"}, {"label": "B", "memory": "b"}],
        columns=[{"label": "S1", "session": 1}, {"label": "S3", "session": 3}],
        metrics={"precision": {"label": "Precision"}, "recall": {"label": "Recall"}},
        column_label="{metric} {column}",
    )
    built = summary_table(table, TableContext(tmp_path, runs=tuple(find_runs(tmp_path, "t"))))
    assert [n.split(":")[0] for n in built.notes] == ["Precision S3", "Recall S3"]
