"""A rendered table that names older runs than the newest matching ones is stale, and
``recallbench-table --check`` says so and exits 1 (issue 53 item 5)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from recallbench.cli.table import table_main
from recallbench.tables import TableContext, reproduce
from recallbench.tables.spec import parse_spec
from recallbench.tables.staleness import check_table, named_runs

A, B = "20260101-000000", "20260102-000000"
BLOCK = {
    "id": "my_k_sweep",
    "title": "k sweep",
    "runs": {"tag": "ksweep"},
    "rows": [{"label": "k=2", "memory.k": 2}, {"label": "k=6", "memory.k": 6}],
    "columns": [{"label": "MSC", "dataset": "msc"}],
    "metrics": {"f1": {"label": "F1", "scale": 100, "digits": 1}},
}
SPEC = parse_spec("mine", Path("conf/experiment/mine.yaml"), BLOCK)


def sweep(results: Path, make_run, stamp: str, ks=(2, 6), tag: str = "ksweep") -> None:
    for k in ks:
        make_run(
            results,
            tag,
            f"msc-mr-memory.k_{k}",
            {"memory": "memory_retrieval", "dataset": "msc"},
            {"f1": {"value": 0.25 * k / 2, "n": 4}},
            stamp=stamp,
            config={"memory": {"k": k}},
        )


def test_a_newer_run_of_a_job_makes_the_table_stale_until_rendered_again(tmp_path, make_run):
    sweep(tmp_path, make_run, A)
    files = reproduce(SPEC, TableContext(results_dir=tmp_path))
    assert named_runs(files["md"]) == named_runs(files["tex"]) == (f"ksweep/{A}",)
    assert check_table(SPEC, tmp_path).status == "current"

    sweep(tmp_path, make_run, B, ks=(6,))  # a newer run of one job of the same selection
    found = check_table(SPEC, tmp_path)
    assert (found.status, found.stale) == ("stale", True)
    assert [(n.job, n.named, n.newest) for n in found.newer] == [
        ("msc-mr-memory.k_6", f"ksweep/{A}", f"ksweep/{B}")
    ]
    assert f"ksweep/{A}" in found.describe() and f"ksweep/{B}" in found.describe()

    reproduce(SPEC, TableContext(results_dir=tmp_path))  # names both sweeps now
    again = check_table(SPEC, tmp_path)
    assert (again.status, set(again.named)) == ("current", {f"ksweep/{A}", f"ksweep/{B}"})


def test_no_matching_runs_is_said_and_not_stale(tmp_path, make_run):
    sweep(tmp_path, make_run, A)
    reproduce(SPEC, TableContext(results_dir=tmp_path))
    shutil.rmtree(tmp_path / "runs")  # a fresh clone: run folders are not committed
    found = check_table(SPEC, tmp_path)
    assert (found.status, found.stale) == ("no runs", False)
    assert "not committed" in found.describe()


def test_runs_the_table_did_not_read_do_not_make_it_stale(tmp_path, make_run):
    sweep(tmp_path, make_run, A)
    reproduce(SPEC, TableContext(results_dir=tmp_path))
    sweep(tmp_path, make_run, B, ks=(9,))  # a job no row of the table reads
    assert check_table(SPEC, tmp_path).status == "current"


def test_a_table_naming_runs_that_are_gone_is_stale_when_newer_ones_exist(tmp_path, make_run):
    sweep(tmp_path, make_run, A)
    reproduce(SPEC, TableContext(results_dir=tmp_path))
    shutil.rmtree(tmp_path / "runs" / "ksweep" / A)
    sweep(tmp_path, make_run, B)
    found = check_table(SPEC, tmp_path)
    assert found.status == "stale" and all(n.named_absent for n in found.newer)
    assert "not in this results folder" in found.describe()


def test_md_and_tex_naming_different_runs_is_stale(tmp_path, make_run):
    sweep(tmp_path, make_run, A)
    files = reproduce(SPEC, TableContext(results_dir=tmp_path))
    tex = files["tex"].read_text().replace(f"% runs: ksweep/{A}", f"% runs: ksweep/{B}")
    files["tex"].write_text(tex)
    assert check_table(SPEC, tmp_path).status == "formats differ"


def test_check_command_exits_1_naming_both_runs_then_0(tmp_path, make_run, capsys):
    """The command on a paper experiment: lufy_table3 reads the runs of lufy_table11."""
    tag = "lufy_table11"
    for stamp in (A, B):
        make_run(tmp_path, tag, "lufy-lufy", {"memory": "lufy", "dataset": "lufy"}, {}, stamp=stamp)
    md = tmp_path / "tables" / "lufy_table3.md"
    md.parent.mkdir()
    md.write_text(f"# Table 3\n\n- **generator**: extractive:extractive\n- **runs**: {tag}/{A}\n")
    with pytest.raises(SystemExit) as done:
        table_main(["lufy_table3", "--check", "--results", str(tmp_path)])
    out = capsys.readouterr().out
    assert done.value.code == 1
    assert f"STALE: job lufy-lufy: the table names {tag}/{A}, the newest is {tag}/{B}" in out
    assert "render it again: recallbench-table lufy_table3" in out

    md.write_text(md.read_text().replace(f"{tag}/{A}", f"{tag}/{B}"))
    with pytest.raises(SystemExit) as done:
        table_main(["lufy_table3", "--check", "--results", str(tmp_path)])
    assert done.value.code == 0
    assert "lufy_table3.md: current" in capsys.readouterr().out


def test_check_without_runs_exits_0_and_says_it_cannot_tell(tmp_path, capsys):
    md = tmp_path / "tables" / "lufy_table3.md"
    md.parent.mkdir(parents=True)
    md.write_text(f"# Table 3\n\n- **runs**: lufy_table3/{A}\n")
    with pytest.raises(SystemExit) as done:
        table_main(["lufy_table3", "--check", "--results", str(tmp_path)])
    assert done.value.code == 0
    assert "no matching runs" in capsys.readouterr().out
