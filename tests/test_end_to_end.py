"""End to end: composed config -> cli.run -> run folder -> rerun from cache -> the table command."""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from recallbench.cli import CONF_DIR, render_table, run, table_main
from recallbench.records import Prediction, read_jsonl

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "fixtures"


def _compose(tmp: Path, *overrides: str):
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        return compose(
            "config",
            overrides=[
                f"paths.results_dir={tmp}",
                "embedder=hashing",
                "generator=extractive",
                "metrics=lexical",
                "progress=false",
                "wandb.mode=disabled",
                *overrides,
            ],
        )


@pytest.fixture(scope="module")
def theanine_runs(tmp_path_factory, monkeypatch_module):
    tmp = tmp_path_factory.mktemp("results")
    monkeypatch_module.setenv("RECALLBENCH_STAMP", "20260101-000000")
    dirs = {}
    for dataset in ("msc", "cc"):
        for memory in ("full_history", "memory_retrieval"):
            cfg = _compose(
                tmp,
                f"dataset={dataset}",
                f"dataset.data_dir={FIXTURES}",
                f"memory={memory}",
                "tag=theanine_table1",
            )
            dirs[(dataset, memory)] = run(
                cfg, f"{dataset}-{memory}", {"memory": memory, "dataset": dataset}
            )
    return tmp, dirs


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_run_folder_has_every_file(theanine_runs):
    _, dirs = theanine_runs
    run_dir = dirs[("msc", "memory_retrieval")]
    for name in (
        "config.yaml",
        "run.json",
        "predictions.jsonl",
        "scores.jsonl",
        "summary.json",
        "usage.json",
    ):
        assert (run_dir / name).is_file(), name
    info = json.loads((run_dir / "run.json").read_text())
    assert info["status"] == "finished" and info["dataset_sha256"]
    preds = read_jsonl(run_dir / "predictions.jsonl", Prediction)
    responses = [p for p in preds if p.kind == "response"]
    assert responses and all(p.reference and p.session_index >= 3 for p in responses)
    assert all(p.meta["recall_text"] is not None for p in responses)
    assert {p.kind for p in preds} == {"response", "timing"}
    snapshots = sorted((run_dir / "memory").glob("*.jsonl"))
    assert snapshots, "memory snapshots after every session"
    rows = [json.loads(line) for line in snapshots[0].read_text().splitlines()]
    assert [r["after_session"] for r in rows] == list(range(1, len(rows) + 1))
    summary = json.loads((run_dir / "summary.json").read_text())
    assert set(summary["metrics"]) >= {"bleu4", "rouge_l", "token_f1"}
    assert summary["metrics"]["token_f1"]["per_session"].keys() >= {"3"}
    assert "sk-" not in (run_dir / "config.yaml").read_text()
    # what the memory did, from the snapshots and the recalls (metrics.activity)
    activity = summary["memory"]["totals"]
    per_episode = [
        {i["item_id"] for line in path.read_text().splitlines() for i in json.loads(line)["items"]}
        for path in snapshots
    ]
    assert activity["episodes"] == len(snapshots)
    assert activity["written"] == sum(len(ids) for ids in per_episode) > 0
    assert activity["retrieved"] == sum(p.meta["n_recalled"] for p in responses)
    assert activity["recalls"] == len(responses)


def test_no_leak_of_current_or_future_sessions(theanine_runs):
    _, dirs = theanine_runs
    for run_dir in dirs.values():
        for p in read_jsonl(run_dir / "predictions.jsonl", Prediction):
            # recalled provenance is from sessions before the prediction's session
            for source in p.recalled:
                index = int(source.split("/s")[-1].split("/")[0])
                assert index < p.session_index, (p.pred_id, source)


def test_rerun_makes_no_uncached_llm_calls(theanine_runs, tmp_path):
    tmp, dirs = theanine_runs
    cfg = _compose(
        tmp,
        "dataset=msc",
        f"dataset.data_dir={FIXTURES}",
        "memory=memory_retrieval",
        "tag=rerun",
    )
    again = run(cfg, "msc-memory_retrieval", {"memory": "memory_retrieval", "dataset": "msc"})
    usage = json.loads((again / "usage.json").read_text())["totals"]
    assert usage["calls"] > 0
    assert usage["calls"] == usage["cached_calls"], usage
    first = read_jsonl(dirs[("msc", "memory_retrieval")] / "predictions.jsonl", Prediction)
    second = read_jsonl(again / "predictions.jsonl", Prediction)
    assert [p.output for p in first] == [p.output for p in second]


def test_resume_skips_finished_episodes(theanine_runs):
    tmp, dirs = theanine_runs
    run_dir = dirs[("cc", "full_history")]
    items = sorted((run_dir / "items").glob("*.jsonl"))
    marker = items[0].read_text()
    cfg = _compose(
        tmp,
        "dataset=cc",
        f"dataset.data_dir={FIXTURES}",
        "memory=full_history",
        f"resume_dir={run_dir}",
    )
    run(cfg, "cc-full_history", {"memory": "full_history", "dataset": "cc"})
    assert items[0].read_text() == marker


def test_table_rendered_from_runs(theanine_runs, capsys):
    tmp, _ = theanine_runs
    table_main(["theanine_table1", "--results", str(tmp), "theanine_table9"])
    printed = capsys.readouterr().out.split()
    paths = {Path(p).suffix[1:]: Path(p) for p in printed if "theanine_table1." in p}
    assert {Path(p).name for p in printed} >= {"theanine_table9.csv", "theanine_table1.tex"}
    md = Path(paths["md"]).read_text()
    assert "All Dialogue History" in md and "Memory Retrieval" in md
    assert "extractive" in md and "hashing" in md
    rows = Path(paths["csv"]).read_text().splitlines()
    assert rows[0] == (
        "row,column,metric,ours,paper,diff,n,episodes,ci_low,ci_high,"
        "p_value,p_holm,significant,comparable,coverage,seed_sd,seeds"
    )
    filled = [r for r in rows[1:] if r.startswith("Memory Retrieval,MSC,Rouge-L")]
    assert filled and filled[0].split(",")[3] not in ("", "n/a")
    missing = [r for r in rows[1:] if r.startswith("All Memories & Current Context,MSC,")]
    assert missing and all(r.split(",")[3] == "n/a" for r in missing), (
        "no run -> n/a, never a value"
    )


def test_a_table_whose_inputs_did_not_change_is_not_rendered_again(
    theanine_runs, monkeypatch, capsys
):
    import os

    from recallbench.cli import table as table_cli

    tmp, dirs = theanine_runs
    monkeypatch.delenv("RECALLBENCH_RERUN", raising=False)  # tests/conftest.py sets it
    table_main(["theanine_table1", "--results", str(tmp)])
    first = capsys.readouterr().out.split()
    md = tmp / "tables" / "theanine_table1.md"
    written = md.read_bytes()
    renders: list[str] = []
    render = table_cli.render_table

    def counted(experiment, overrides):
        renders.append(experiment)
        return render(experiment, overrides)

    monkeypatch.setattr(table_cli, "render_table", counted)
    table_main(["theanine_table1", "--results", str(tmp)])  # nothing changed: the same files
    assert renders == [] and capsys.readouterr().out.split() == first
    assert md.read_bytes() == written
    # a run of another experiment (``make tables`` adds them after this table): not an input
    other = tmp / "runs" / "another_experiment" / "20990101-000000" / "job"
    other.mkdir(parents=True)
    (other / "run.json").write_text('{"status": "finished"}')
    table_main(["theanine_table1", "--results", str(tmp)])
    assert renders == [] and capsys.readouterr().out.split() == first
    (tmp / "fits").mkdir()  # any other results folder may be read (fits/, human/): an input
    (tmp / "fits" / "x.json").write_text("{}")
    table_main(["theanine_table1", "--results", str(tmp)])
    assert renders == ["theanine_table1"]
    renders.clear()
    summary = dirs[("msc", "full_history")] / "summary.json"  # a run it reads changed
    os.utime(summary, ns=(summary.stat().st_atime_ns, summary.stat().st_mtime_ns + 10**9))
    table_main(["theanine_table1", "--results", str(tmp)])
    assert renders == ["theanine_table1"] and md.read_bytes() == written
    md.write_text("edited by hand")  # a table file no longer as written: rendered again
    table_main(["theanine_table1", "--results", str(tmp)])
    assert renders == ["theanine_table1"] * 2 and md.read_bytes() == written


def test_geval_head_to_head_from_runs(theanine_runs):
    tmp, _ = theanine_runs
    rows = (
        "[{label: vs itself, memory: memory_retrieval}, {label: vs history, memory: full_history}]"
    )
    paths = render_table(
        "theanine_figure5",
        [
            f"paths.results_dir={tmp}",
            "table.ours={label: MR, memory: memory_retrieval}",
            f"table.rows={rows}",
        ],
    )
    with paths["csv"].open(encoding="utf-8") as fh:
        cells = {(r["row"], r["column"], r["metric"]): r for r in csv.DictReader(fh)}
    for dataset in ("MSC", "CC"):
        # a run against itself: the same memory on both sides ties in both orders, every time
        same = {m: cells["vs itself", dataset, m] for m in ("Win", "Tie", "Loss")}
        assert [float(same[m]["ours"]) for m in ("Win", "Tie", "Loss")] == [0.0, 100.0, 0.0]
        assert int(same["Tie"]["n"]) > 0 and same["Tie"]["paper"] == "n/a"
        other = [float(cells["vs history", dataset, m]["ours"]) for m in ("Win", "Tie", "Loss")]
        assert sum(other) == pytest.approx(100.0)
    out = tmp / "geval" / "theanine_figure5" / "MSC"
    assert (out / "geval_memory_retrieval_vs_full_history.jsonl").is_file()


def test_runs_overview_notebook_executes(theanine_runs, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    tmp, _ = theanine_runs
    monkeypatch.setenv("RECALLBENCH_RESULTS_DIR", str(tmp))
    monkeypatch.setenv("RECALLBENCH_TAG", "theanine_table1")
    path = Path(__file__).resolve().parents[1] / "notebooks" / "01_runs_overview.ipynb"
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp)}}
    ).execute()
    printed = "".join(
        out.get("text", "") for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs
    )
    assert "4 finished runs" in printed
    # its figures go where git ignores generated files (issue 53: not loose in results/)
    assert sorted(p.relative_to(tmp).as_posix() for p in tmp.rglob("runs_*.png")) == [
        "figures/runs_overview.png"
    ]
    root = path.parents[1]
    ignored = subprocess.run(
        ["git", "-C", str(root), "check-ignore", "-q", "results/figures/runs_overview.png"],
        check=False,
    )
    assert ignored.returncode == 0  # `git status` stays clean after a user runs it
