"""Run selection keyed by (tag, stamp, job), runs under any folder, and the results folder found
from wherever the caller runs."""

from __future__ import annotations

import pytest

from recallbench.analysis import (
    config_value,
    explain_no_runs,
    find_results_dir,
    find_runs,
    latest_per_job,
    override_keys,
    runs_in,
)


def test_same_named_jobs_of_two_tags_stay_apart_and_the_newest_stamp_wins(tmp_path, make_run):
    make_run(tmp_path, "sweep_a", "20260101-000000", "msc-mr", metrics={"f1": 0.1})
    make_run(tmp_path, "sweep_a", "20260102-000000", "msc-mr", metrics={"f1": 0.2})
    make_run(tmp_path, "sweep_b", "20260101-120000", "msc-mr", metrics={"f1": 0.3})
    latest = latest_per_job(find_runs(tmp_path))
    assert sorted(latest) == [("sweep_a", "msc-mr"), ("sweep_b", "msc-mr")]
    assert latest["sweep_a", "msc-mr"].stamp == "20260102-000000"
    assert latest["sweep_b", "msc-mr"].key == ("sweep_b", "20260101-120000", "msc-mr")


def test_runs_in_finds_runs_under_a_run_a_sweep_a_tag_and_a_results_folder(tmp_path, make_run):
    one = make_run(tmp_path, "t", "20260101-000000", "a")
    make_run(tmp_path, "t", "20260101-000000", "b")
    make_run(tmp_path, "t", "20260102-000000", "a")
    make_run(tmp_path, "u", "20260101-000000", "a", status="failed")
    assert [r.job for r in runs_in(one)] == ["a"]
    assert [r.job for r in runs_in(one.parent)] == ["a", "b"]
    assert len(runs_in(tmp_path / "runs" / "t")) == 3
    assert len(runs_in(tmp_path)) == 3  # the failed run is left out
    assert len(runs_in(tmp_path, finished=False)) == 4
    with pytest.raises(FileNotFoundError, match="nowhere: no such folder"):
        runs_in(tmp_path / "nowhere")


def test_override_values_are_typed_from_the_config(tmp_path, make_run):
    run_dir = make_run(
        tmp_path,
        "t",
        "s",
        "j",
        overrides=("memory=memory_retrieval", "memory.k=2", "+memory.update=true", "episodes=5"),
        config={"memory": {"k": 2, "update": True}, "episodes": 5},
    )
    (run,) = runs_in(run_dir)
    assert override_keys(run) == ["memory", "memory.k", "memory.update", "episodes"]
    values = {k: config_value(run, k) for k in override_keys(run)}
    assert values == {
        "memory": "memory_retrieval",
        "memory.k": 2,
        "memory.update": True,
        "episodes": 5,
    }
    assert config_value(run, "memory.absent") is None


def test_results_folder_is_found_from_a_subfolder_of_the_project(tmp_path, make_run, monkeypatch):
    monkeypatch.delenv("RECALLBENCH_RESULTS_DIR", raising=False)
    project = tmp_path / "project"
    (project / "conf").mkdir(parents=True)
    (project / "conf" / "config.yaml").write_text("tag: adhoc\n")
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (project / "notebooks").mkdir()
    # no results yet: the checkout's results folder, not ./results of the notebook folder
    assert find_results_dir(start=project / "notebooks") == project / "results"
    make_run(project / "results", "t", "s", "j")
    assert find_results_dir(start=project / "notebooks") == project / "results"
    # a relative $RECALLBENCH_RESULTS_DIR means the project's, as the Makefile passes it
    monkeypatch.setenv("RECALLBENCH_RESULTS_DIR", "results")
    assert find_results_dir(start=project / "notebooks") == project / "results"
    monkeypatch.setenv("RECALLBENCH_RESULTS_DIR", str(tmp_path / "elsewhere"))
    assert find_results_dir(start=project / "notebooks") == tmp_path / "elsewhere"
    assert find_results_dir(tmp_path / "given") == tmp_path / "given"


def test_no_runs_is_explained_with_what_is_there(tmp_path, make_run):
    assert "No runs under" in explain_no_runs(tmp_path)
    make_run(tmp_path, "ksweep", "s", "a")
    make_run(tmp_path, "mysweep", "s", "a", status="interrupted")
    text = explain_no_runs(tmp_path, "mysweep")
    assert f"No finished runs under {tmp_path / 'runs' / 'mysweep'}" in text
    assert "1 interrupted" in text
    assert "ksweep (1 finished)" in text and "mysweep (0 finished)" in text
