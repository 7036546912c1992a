"""``recallbench-matrix`` on the fixtures: the plan derives each unavailable cell's reason from
what the method and the protocol need and what the data provides; a small matrix runs and its
table has one row per method, one column per setting reporting the metric, and reasons."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from recallbench.cli.matrix import matrix_main, merged, plan_matrix
from recallbench.cli.matrix_plan import every_method, methods_of, settings_of

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"
BLOCK = {
    "reference": "no_memory",
    "methods": ["no_memory", "gold_memory", "naive_rag", "memory_retrieval", "caim"],
    "labels": {"no_memory": "No memory"},
    "episodes": 2,
    "settings": [
        {"slice": "lufy_cross", "label": "LUFY"},
        {
            "key": "msc",
            "label": "MSC",
            "experiment": "theanine_table1",
            "overrides": ["dataset=msc"],
        },
        {"key": "ops", "label": "Ops", "experiment": "carecall_table3", "episodes": None},
        {
            "key": "nodata",
            "label": "No data",
            "experiment": "theanine_table1",
            "overrides": ["dataset=cc", "dataset.data_dir=/nonexistent"],
        },
    ],
}


def test_every_method_is_each_memory_module_once():
    methods = every_method()
    assert {"lufy", "theanine", "caim", "timerag", "no_memory", "naive_rag"} <= set(methods)
    assert not any(m.endswith(("_carecall", "_no_linking", "_gold")) for m in methods)


def test_slice_takes_the_columns_of_lufy_cross():
    settings = settings_of(BLOCK, "test")
    lufy = [s for s in settings if s.key.startswith("lufy_cross")]
    assert [s.values["dataset.options.system"] for s in lufy] == ["Naive RAG", "MemoryBank", "LUFY"]
    assert all(s.place == {"value": "session_mean"} and s.episodes == 2 for s in lufy)
    assert [m.label for m in methods_of(BLOCK, "test")][:2] == ["No memory", "gold_memory"]


@pytest.fixture(scope="module")
def plan():
    extra = [f"paths.data_dir={FIXTURES}", "embedder=hashing"]
    block = {**BLOCK, "settings": BLOCK["settings"][1:]}
    plan, _ = plan_matrix(
        block, "matrix", extra, settings_of(block, "test"), methods_of(block, "test")
    )
    return plan


def test_plan_reasons_are_derived(plan):
    cells = plan["cells"]
    assert cells["msc"]["gold_memory"]["reason"] == "needs gold memory (msc sample has none)"
    assert cells["msc"]["no_memory"].get("status") is None  # runnable
    assert cells["ops"]["gold_memory"]["reason"] == "GoldMemory has no memory updater (HasUpdater)"
    ops = cells["ops"]["naive_rag"]["reason"]
    assert ops == "NaiveRAG has no memory updater (HasUpdater)"
    assert cells["ops"]["memory_retrieval"].get("status") is None  # it has an updater
    assert all(c["reason"].startswith("no data: ") for c in cells["nodata"].values())
    # a table prints the reason: no machine path, no terminal advice
    assert all("/nonexistent" not in c["reason"] for c in cells["nodata"].values())
    assert all("make data" not in c["reason"] for c in cells["nodata"].values())
    facts = {s["key"]: s["facts"] for s in plan["settings"]}
    assert "gold memory" in facts["ops"] and "gold memory" not in facts["msc"]


def test_a_partial_plan_keeps_the_other_cells(plan):
    later = {**plan, "settings": plan["settings"][:1], "cells": {"msc": {"caim": {"x": 1}}}}
    both = merged(plan, later)
    assert [s["key"] for s in both["settings"]] == [s["key"] for s in plan["settings"]]
    assert both["cells"]["msc"]["caim"] == {"x": 1}
    assert both["cells"]["ops"] == plan["cells"]["ops"]


def _fixture_overrides(tmp_path: Path) -> list[str]:
    """A matrix on the fixtures into ``tmp_path``, hashing embedder, ROUGE-L only."""
    return [
        f"paths.data_dir={FIXTURES}",
        f"paths.results_dir={tmp_path}",
        "embedder=hashing",
        "metrics.names=[rouge_l]",
        "progress=false",
    ]


def test_a_small_matrix_on_fixtures(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RECALLBENCH_STAMP", "20260101-000000")  # one matrix command's stamp
    argv = [
        "--settings",
        "msc_theanine",
        "--methods",
        "no_memory,gold_memory,naive_rag",
        *_fixture_overrides(tmp_path),
    ]
    matrix_main(argv)
    plan = json.loads((tmp_path / "runs" / "matrix" / "plan.json").read_text())
    cell = plan["cells"]["msc_theanine"]["naive_rag"]
    assert cell["status"] == "finished" and "reused" not in cell
    with (tmp_path / "tables" / "matrix_rouge_l.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert [r["row"] for r in rows] == ["No memory", "Gold memory", "Naive RAG"]
    assert {r["column"] for r in rows} == {"MSC (THEANINE)"}
    by = {r["row"]: r for r in rows}
    assert by["Gold memory"]["ours"] == "n/a: needs gold memory"
    assert by["Gold memory"]["coverage"] == ""  # no run: no fixture marker on the n/a
    assert float(by["Naive RAG"]["ours"]) > 0 and by["Naive RAG"]["coverage"] == "§"
    md = (tmp_path / "tables" / "matrix_rouge_l.md").read_text()
    assert "needs gold memory (msc sample has none) -- Gold memory @ MSC (THEANINE)" in md
    assert "MSC (THEANINE): 2 (asked 2)" in md  # the episodes sampled, in the header
    assert (tmp_path / "tables" / "matrix_cost.png").is_file()
    assert "matrix_f1: no planned setting reports its metrics" in capsys.readouterr().out
    matrix_main(["--methods", "naive_rag", *argv[2:]])  # again: the finished cell is reused
    again = json.loads((tmp_path / "runs" / "matrix" / "plan.json").read_text())
    reused = again["cells"]["msc_theanine"]["naive_rag"]
    assert reused["reused"] is True and reused["run"] == cell["run"]
    assert again["cells"]["msc_theanine"]["no_memory"]["status"] == "finished"  # kept
    # the same config hash made by other code (or on other data) is not the same run: the
    # cell's identity is run()'s (config hash, packages, data sha256, the modules it ran)
    info_path = Path(cell["run"]) / "run.json"
    info = json.loads(info_path.read_text())
    module = next(m for m in info["sources"]["modules"] if "naive_rag" in m)
    info["sources"]["modules"][module] = "0" * 64  # as if run by another naive_rag
    info_path.write_text(json.dumps(info))
    monkeypatch.setenv("RECALLBENCH_STAMP", "20260101-000001")  # a later command
    matrix_main(["--methods", "naive_rag", *argv[2:]])
    third = json.loads((tmp_path / "runs" / "matrix" / "plan.json").read_text())
    rerun = third["cells"]["msc_theanine"]["naive_rag"]
    assert rerun["status"] == "finished" and "reused" not in rerun
    assert rerun["run"] != cell["run"]


@pytest.mark.parametrize("flag", [["--episodes", "3"], ["episodes=3"]])
def test_episodes_per_setting_from_the_command_line(tmp_path, flag):
    """``make matrix EPISODES=3`` passes ``episodes=3``; a setting that fixes its own (GVD's
    three keyed users: null) keeps it."""
    argv = ["--plan-only", "--settings", "msc_theanine,gvd", "--methods", "no_memory", *flag]
    matrix_main([*argv, f"paths.data_dir={FIXTURES}", f"paths.results_dir={tmp_path}"])
    plan = json.loads((tmp_path / "runs" / "matrix" / "plan.json").read_text())
    asked = {s["key"]: s["episodes_asked"] for s in plan["settings"]}
    assert asked == {"msc_theanine": 3, "gvd": None}


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["memory.nn=3"], "memory.nn=3"),
        (["--episodes", "0"], "--episodes 0: expected an integer >= 1"),
        (["episodes=many"], "episodes=many: expected an integer >= 1"),
    ],
)
def test_a_wrong_key_or_value_is_one_line_and_exit_2(tmp_path, capsys, args, expected):
    argv = ["--plan-only", "--settings", "msc_theanine", "--methods", "no_memory", *args]
    with pytest.raises(SystemExit) as stop:
        matrix_main([*argv, f"paths.data_dir={FIXTURES}", f"paths.results_dir={tmp_path}"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "Traceback" not in err
    (line,) = err.strip().splitlines()
    assert line.startswith("recallbench-matrix: error: ") and expected in line


def test_a_skipped_method_keeps_its_row_as_not_run_with_the_reason(tmp_path, capsys, monkeypatch):
    # a method that takes hours on two cores (Graphiti) is planned, shown, never run
    monkeypatch.setenv("RECALLBENCH_STAMP", "20260101-000000")
    argv = [
        "--settings",
        "msc_theanine",
        "--methods",
        "no_memory,naive_rag",
        "--skip",
        "naive_rag",
        "--why",
        "hours per episode here",
        *_fixture_overrides(tmp_path),
    ]
    matrix_main(argv)
    plan = json.loads((tmp_path / "runs" / "matrix" / "plan.json").read_text())
    cells = plan["cells"]["msc_theanine"]
    assert cells["naive_rag"]["status"] == "skipped" and "run" not in cells["naive_rag"]
    assert cells["no_memory"]["status"] == "finished"
    rows = {
        r["row"]: r for r in csv.DictReader((tmp_path / "tables" / "matrix_rouge_l.csv").open())
    }
    assert rows["Naive RAG"]["ours"] == "n/a: not run"
    md = (tmp_path / "tables" / "matrix_rouge_l.md").read_text()
    assert "not run (hours per episode here) -- Naive RAG @ MSC (THEANINE)" in md
    # without --skip the next command runs it (the finished cell is reused)
    matrix_main(["--settings", "msc_theanine", "--methods", "naive_rag", *argv[8:]])
    again = json.loads((tmp_path / "runs" / "matrix" / "plan.json").read_text())
    assert again["cells"]["msc_theanine"]["naive_rag"]["status"] == "finished"
    with pytest.raises(SystemExit) as stop:  # --skip without a reason: one line, before planning
        matrix_main(["--skip", "naive_rag", *argv[8:]])
    assert stop.value.code == 2 and "--skip needs --why" in capsys.readouterr().err
