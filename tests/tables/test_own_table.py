"""A user's own table: no paper, a free id, runs by tag or folder; a paper table keeps its rules.
Rendering writes <id>.* with ours only (no paper column to fill, no difference)."""

from __future__ import annotations

from pathlib import Path

import pytest

from recallbench.tables import TableContext, TableSpecError, reproduce
from recallbench.tables.engine import table_runs
from recallbench.tables.spec import parse_spec

WHERE = Path("conf/experiment/mine.yaml")
OWN = {
    "id": "my_k_sweep",
    "title": "k sweep",
    "runs": {"tag": "ksweep"},
    "rows": [{"label": "k=2", "memory.k": 2}, {"label": "k=6", "memory.k": 6}],
    "columns": [{"label": "MSC", "dataset": "msc"}],
    "metrics": {"f1": {"label": "F1", "scale": 100, "digits": 1}},
}


def parse(**changes):
    block = {k: v for k, v in {**OWN, **changes}.items() if v is not ...}
    return parse_spec("mine", WHERE, block)


def test_an_own_table_has_no_paper_a_free_id_and_reads_tags_and_folders():
    spec = parse(runs={"tag": ["a", "b"], "folder": "results/runs/c/20260101-000000"})
    assert (spec.paper, spec.id, spec.tags, spec.folders) == (
        None,
        "my_k_sweep",
        ("a", "b"),
        ("results/runs/c/20260101-000000",),
    )
    assert spec.runs == "tag a, b; folder results/runs/c/20260101-000000"


@pytest.mark.parametrize(
    ("changes", "where", "expected"),
    [
        ({"id": "my table"}, "table.id", "expected a file name"),
        ({"id": "../x"}, "table.id", "expected a file name"),
        ({"runs": {"tags": "x"}}, "table.runs", "a mapping with 'tag' and/or 'folder'"),
        ({"runs": {}}, "table.runs", "a mapping with 'tag' and/or 'folder'"),
        ({"runs": {"tag": ["ok", 3]}}, "table.runs.tag", "a non-empty string or a list"),
        ({"paper": "lufy"}, "table.id", "expected table<n> or figure<n>"),
        ({"paper": "lufyy", "id": "table3"}, "table.paper", "Did you mean 'lufy'"),
        ({"title": ...}, "table.title", "expected a non-empty string"),
    ],
)
def test_bad_blocks_name_the_file_and_key(changes, where, expected):
    with pytest.raises(TableSpecError) as err:
        parse(**changes)
    assert str(err.value).startswith(f"{WHERE}: {where}:") and expected in str(err.value)


def test_own_table_renders_ours_only_from_the_tagged_runs(tmp_path, make_run):
    for k, f1, stamp in (
        (2, 0.25, "20260101-000000"),
        (6, 0.5, "20260101-000000"),
        (6, 0.75, "20260102-000000"),
    ):
        make_run(
            tmp_path,
            "ksweep",
            f"msc-mr-memory.k_{k}",
            {"memory": "memory_retrieval", "dataset": "msc"},
            {"f1": {"value": f1, "n": 4}},
            stamp=stamp,
            config={"memory": {"k": k}},
        )
    make_run(
        tmp_path,
        "other",
        "msc-mr-memory.k_2",
        {"memory": "memory_retrieval", "dataset": "msc"},
        {"f1": {"value": 0.9, "n": 4}},
        config={"memory": {"k": 2}},
    )
    spec = parse()
    assert {(r.tag, r.stamp) for r in table_runs(spec, tmp_path)} == {
        ("ksweep", "20260101-000000"),
        ("ksweep", "20260102-000000"),
    }  # the newest run of every job of the tag; the other tag's same-named job is not read
    files = reproduce(spec, TableContext(results_dir=tmp_path))
    assert sorted(p.name for p in files.values()) == [
        "my_k_sweep.csv",
        "my_k_sweep.md",
        "my_k_sweep.tex",
    ]
    md = files["md"].read_text()
    assert "| k=2 | 25.0 | 4 |" in md and "| k=6 | 75.0 | 4 |" in md
    assert "(—)" not in md and "comparability" not in md
    missing = parse(runs={"folder": str(tmp_path / "nowhere")})
    with pytest.raises(FileNotFoundError, match="table.runs.folder: .*nowhere not found"):
        table_runs(missing, tmp_path)
    by_folder = parse(runs={"folder": str(tmp_path / "runs" / "other")})
    assert [r.tag for r in table_runs(by_folder, tmp_path)] == ["other"]
