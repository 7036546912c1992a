"""read_run: a folder the runner writes now, read whole; the older shapes earlier readers took."""

from __future__ import annotations

import json
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from recallbench.cli import compose_job, run
from recallbench.errors import DataNotFoundError, DatasetFormatError
from recallbench.records import MemoryItem, Prediction, Score, read_jsonl
from recallbench.run.read import MetricSummary, RunConfig, RunRecord, read_run

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny extractive run (the three MSC fixture episodes) written by the current runner."""
    tmp = tmp_path_factory.mktemp("results")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RECALLBENCH_STAMP", "20260101-000000")
        return _run(tmp)


def _run(tmp: Path) -> Path:
    cfg, _ = compose_job(
        [
            f"paths.results_dir={tmp}",
            "embedder=hashing",
            "generator=extractive",
            "metrics=lexical",
            "progress=false",
            "wandb.mode=disabled",
            "dataset=msc",
            f"dataset.data_dir={FIXTURES}",
            "memory=memory_retrieval",
            "memory.k=2",
            "tag=read",
        ]
    )
    return Path(run(cfg, "msc-mr", {"memory": "memory_retrieval", "dataset": "msc"}))


def _copy(fresh: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "runs" / "read" / "20260101-000000" / "msc-mr"
    shutil.copytree(fresh, folder)
    return folder


def test_a_fresh_run_reads_as_its_files_say(fresh: Path) -> None:
    record = read_run(fresh)
    info = json.loads((fresh / "run.json").read_text())
    raw = yaml.safe_load((fresh / "config.yaml").read_text())
    summary = json.loads((fresh / "summary.json").read_text())
    assert record.key == ("read", "20260101-000000", "msc-mr")
    assert (record.status, record.provenance.commit) == ("finished", info["git_sha"])
    assert record.provenance.n_episodes == info["n_episodes"] == len(record.episodes) == 3
    assert record.provenance.sources == info["sources"]
    config = record.config
    assert (config.memory.choice, config.dataset.choice) == ("memory_retrieval", "msc")
    assert (config.dataset.name, config.dataset.data_dir) == ("msc", str(FIXTURES))
    assert (config.generator.backend, config.embedder.kind) == ("extractive", "hashing")
    assert config.protocol.name == raw["protocol"]["name"] and config.protocol.metrics
    assert config.value("memory.k") == 2
    assert record.overrides == tuple(raw.get("overrides") or ())
    assert config.value("memory.nope") is None and config.raw == raw
    assert record.predictions == tuple(read_jsonl(fresh / "predictions.jsonl", Prediction))
    assert record.scores == tuple(read_jsonl(fresh / "scores.jsonl", Score))
    for name, entry in summary["metrics"].items():
        got = record.metrics[name]
        assert (got.value, got.n, got.ci_level) == (entry["value"], entry["n"], 95)
        assert got.ci == (tuple(entry["ci95"]) if entry["ci95"] else None)
        assert set(got.per_session) == set(entry["per_session"])
    usage = json.loads((fresh / "usage.json").read_text())
    assert record.usage is not None
    assert record.usage.totals.count("calls") == usage["totals"]["calls"]
    assert record.memory_activity() == summary["memory"]
    assert set(record.snapshots) == set(record.episodes)
    episode = next(iter(record.episodes))
    assert record.snapshots_of(episode) == record.snapshots[episode]
    assert record.stores[episode, record.snapshots[episode][-1].after_session]
    assert record.missing == ()


def test_an_unfinished_run_reads_its_finished_episodes(fresh: Path, tmp_path: Path) -> None:
    folder = _copy(fresh, tmp_path)
    for name in ("predictions.jsonl", "summary.json", "usage.json", "scores.jsonl"):
        (folder / name).unlink()
    record = read_run(folder)
    items = [
        p for f in sorted((folder / "items").glob("*.jsonl")) for p in read_jsonl(f, Prediction)
    ]
    assert record.predictions == tuple(items) and items
    assert (record.usage, record.scores, record.metrics) == (None, (), {})
    assert record.summary == {"metrics": {}}
    assert record.missing == ("summary.json", "usage.json", "predictions.jsonl", "scores.jsonl")


def test_episodes_missing_from_the_folder_are_reloaded_from_its_dataset(
    fresh: Path, tmp_path: Path
) -> None:
    replayed = read_run(fresh).episodes
    folder = _copy(fresh, tmp_path)
    shutil.rmtree(folder / "episodes")
    record = read_run(folder)
    assert record.episodes == {}
    assert record.episodes_for(list(replayed)) == replayed
    with pytest.raises(ValueError, match="'nobody' is neither in episodes/ nor the dataset"):
        record.episodes_for(["nobody"])


def test_a_folder_without_config_reads_an_empty_config(fresh: Path, tmp_path: Path) -> None:
    folder = _copy(fresh, tmp_path)
    (folder / "config.yaml").unlink()
    record = read_run(folder)
    assert (record.choices, record.config.dataset.name, record.config.protocol.metrics) == (
        {},
        None,
        (),
    )
    assert not record.config.judge.present and record.missing == ("config.yaml",)
    with pytest.raises(ValueError, match="dataset block needs name and data_dir"):
        record.dataset_episodes()


def _folder(tmp_path: Path, info: object = None) -> Path:
    folder = tmp_path / "runs" / "t" / "s" / "j"
    folder.mkdir(parents=True)
    info = {"status": "finished", "n_episodes": 1} if info is None else info
    (folder / "run.json").write_text(json.dumps(info))
    return folder


def test_an_imported_run_has_no_usage_nor_memory_and_keeps_its_latency(tmp_path: Path) -> None:
    # protocols.locomo_import: a published answer file as a run; summary.json latency_ms.
    folder = _folder(tmp_path)
    latency = {"p50": 812.0, "p95": 2150.5, "n": 3}
    summary = {"metrics": {"j": {"value": 0.5, "n": 2, "ci95": None}}, "latency_ms": latency}
    (folder / "summary.json").write_text(json.dumps(summary))
    record = read_run(folder)
    assert record.summary["latency_ms"] == latency and record.usage is None
    assert record.metrics["j"] == MetricSummary("j", 0.5, 2, None, 95, raw=summary["metrics"]["j"])
    assert (record.snapshots, record.memory_activity()["totals"]["episodes"]) == ({}, 0)


def test_older_summary_entries_read_as_far_as_they_go() -> None:
    entry = {"value": 3, "per_session": {"1": 0.25, "2": {"value": 0.5}}, "ci90": [0.1, 0.4]}
    got = MetricSummary.from_entry("f1", entry)
    assert (got.value, got.n, got.ci, got.ci_level) == (3, None, (0.1, 0.4), 90)
    assert (got.per_session["1"].value, got.per_session["2"].value) == (0.25, 0.5)
    assert MetricSummary.from_entry("x", {"value": "n/a"}).value is None
    bare = MetricSummary.from_entry("x", {"value": 1.0, "ci_note": "no interval from 1 cluster(s)"})
    assert (bare.ci, bare.ci_level, bare.ci_note) == (None, None, "no interval from 1 cluster(s)")


def test_store_rows_and_predictions_written_by_hand(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder / "memory").mkdir()
    rows = [
        {"after_session": 1, "items": [{"item_id": "a", "text": "tea"}]},  # no kind: ""
        {"after_session": 2},  # no items: an empty store
        {"after_session": 3, "items": None},
    ]
    (folder / "memory" / "e.jsonl").write_text("\n".join(map(json.dumps, rows)) + "\n\n")
    pred = {"pred_id": "p", "episode_id": "e", "session_index": 1, "kind": "answer", "output": ""}
    (folder / "predictions.jsonl").write_text(json.dumps(pred) + "\n")  # no prompt_hash
    record = read_run(folder)
    stores = record.snapshots_of("e")
    assert [s.after_session for s in stores] == [1, 2, 3]
    assert stores[0].items == (MemoryItem("a", "tea", "", None, (), {}),)
    assert stores[1].items == stores[2].items == ()
    assert record.predictions[0].prompt_hash == ""
    assert record.snapshots_of("other") == ()


def test_the_recency_filter_of_the_config_decides_what_is_in_memory(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder / "memory").mkdir()
    rows = [(1, [{"item_id": "a", "text": "t", "kind": "fact"}])]
    rows.append(
        (2, [{"item_id": "a", "text": "t", "kind": "fact", "attrs": {"status": "decayed"}}])
    )
    lines = [json.dumps({"after_session": i, "items": items}) for i, items in rows]
    (folder / "memory" / "T.jsonl").write_text("\n".join(lines))
    (folder / "config.yaml").write_text("memory:\n  recency_filter: false\n")
    assert read_run(folder).memory_activity()["totals"]["store"] == 1
    (folder / "config.yaml").write_text("memory:\n  recency_filter: true\n")
    assert read_run(folder).memory_activity()["totals"]["store"] == 0
    assert RunConfig({"memory": {"recency_filter": False}}).memory.decayed_recallable


def test_status_unknown_and_stale(tmp_path: Path) -> None:
    assert read_run(_folder(tmp_path / "a", {"n_episodes": 1})).status == "unknown"
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    info = {"status": "running", "pid": int(gone), "host": platform.node()}
    assert read_run(_folder(tmp_path / "b", info)).status == "stale"


def test_what_is_not_a_run_is_named(tmp_path: Path) -> None:
    with pytest.raises(DataNotFoundError, match="not a run folder"):
        read_run(tmp_path)
    assert read_run(tmp_path, need_record=False).status == "unknown"
    with pytest.raises(DatasetFormatError, match=r"run\.json: expected a JSON object"):
        read_run(_folder(tmp_path / "a", [1]))
    folder = _folder(tmp_path / "b")
    (folder / "predictions.jsonl").write_text('{"pred_id": "p"}\n')
    with pytest.raises(DatasetFormatError, match=r"predictions\.jsonl line 1: .*episode_id"):
        _ = read_run(folder).predictions
    (folder / "config.yaml").write_text("- a list\n")
    with pytest.raises(DatasetFormatError, match=r"config\.yaml: expected a mapping"):
        _ = read_run(folder).config


def test_a_record_made_with_another_config_reads_that_config(tmp_path: Path) -> None:
    record = read_run(_folder(tmp_path))
    moved = RunRecord(record.path, record.provenance, {"dataset": {"data_dir": "/d"}})
    assert (moved.config.dataset.data_dir, moved.status) == ("/d", "finished")
    assert record.config.dataset.data_dir is None
