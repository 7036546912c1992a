"""The run log (``run.json``, ``run.read.RunLog``): versioned, and every older folder still reads.

``OLD_RUN`` below is a finished run's ``run.json`` as the runner wrote it before the log had a
``version`` (commit 3aa4600, version 0), and ``_write_old_folder`` writes a whole folder the way
that runner did (``json.dumps(indent=2, sort_keys=True)`` + newline, ``yaml.safe_dump`` in key
order, one ``to_json`` line per record): the logic copied here as it was, so a change of today's
writer cannot change the fixture.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from recallbench.cli import compose_job, run
from recallbench.errors import DatasetFormatError, ResumeError
from recallbench.records import Prediction, Score
from recallbench.run.read import LOG_VERSION, RunLog, read_log, read_run, write_log
from recallbench.run.resume import previous_log, refuse_foreign
from recallbench.run.sweep import job_usage

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"

OLD_RUN = {
    "attempt": 2,
    "config_hash": "99975dec6eb96bee",
    "dataset_sha256": "8e7208e33d381f21fa37f5f06807f7f002e6cf5656c83390355c37b81666e55a",
    "episodes_done": 1,
    "finished_unix": 1796629603.245288,
    "first_started_unix": 1796629500.5,
    "generator": {"backend": "extractive", "model": "extractive", "structured": "off"},
    "git_diff_sha256": None,
    "git_dirty": False,
    "git_sha": "3aa46007239862df70c81f9a199d63a07d7c5f42",
    "heartbeat_unix": 1796629603.2454755,
    "host": "vm",
    "n_episodes": 1,
    "overrides": ["dataset=msc", "memory=memory_retrieval", "memory.k=1"],
    "pid": 9293,
    "predictions_done": 1,
    "replayed_unix": 1796629603.1,
    "sources": {"modules": {"src/recallbench/records.py": "ab" * 32}, "reads": {}},
    "started_unix": 1796629602.6845083,
    "status": "finished",
    "versions": {"python": "3.11.7", "recallbench": "0.1.0", "numpy": "2.4.6"},
}
OLD_CONFIG = {"dataset": {"name": "msc"}, "memory": {"k": 1}, "protocol": {"name": "response"}}
OLD_SUMMARY = {
    "metrics": {"f1": {"value": 0.5, "n": 1, "ci95": None, "per_session": {"2": {"n": 1}}}},
    "n_episodes": 1,
    "n_predictions": 1,
    "memory": {"totals": {"written": 2}},
    "failed_calls_not_scored": 0,
}
ATTEMPTS = [
    {"totals": {"calls": 5, "cached_calls": 1, "cost_usd": 0.25}},
    {"totals": {"calls": 3, "cached_calls": 3, "cost_usd": 0.0}},
]
PREDICTION = Prediction("e1:s2:t1", "e1", 2, "response", "", "hello", reference="hi")
SCORE = Score("e1:s2:t1", "f1", 0.5)


def _dump(path: Path, data: object) -> None:
    """How the runner of 3aa4600 wrote JSON (``io.write_json``'s defaults)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _write_old_folder(folder: Path, info: dict[str, object] = OLD_RUN) -> Path:
    """A run folder as the runner of 3aa4600 wrote it (no ``version`` in run.json)."""
    _dump(folder / "run.json", info)
    (folder / "config.yaml").write_text(yaml.safe_dump(OLD_CONFIG, sort_keys=False))
    for name, record in (("predictions.jsonl", PREDICTION), ("scores.jsonl", SCORE)):
        (folder / name).write_text(record.to_json() + "\n", encoding="utf-8")
    (folder / "items").mkdir()
    (folder / "items" / "e1.jsonl").write_text(PREDICTION.to_json() + "\n", encoding="utf-8")
    _dump(folder / "summary.json", OLD_SUMMARY)
    for n, usage in enumerate(ATTEMPTS, 1):
        _dump(folder / "usage" / f"attempt-{n}.json", usage)
    _dump(
        folder / "usage.json",
        {
            "attempts": [
                {"attempt": 1, **ATTEMPTS[0]["totals"]},
                {"attempt": 2, **ATTEMPTS[1]["totals"]},
            ],
            "totals": {"calls": 8, "cached_calls": 4, "cost_usd": 0.25},
        },
    )
    return folder


def test_a_folder_written_before_the_version_reads_the_same(tmp_path: Path) -> None:
    folder = _write_old_folder(tmp_path / "runs" / "t" / "s" / "j")
    record = read_run(folder)
    log = record.provenance.log
    assert log.version == LOG_VERSION  # migrated from version 0
    assert (record.status, record.provenance.attempt, record.provenance.commit) == (
        "finished",
        2,
        OLD_RUN["git_sha"],
    )
    assert record.provenance.sources == OLD_RUN["sources"]
    assert (log.generator, log.overrides, log.first_started_unix) == (
        OLD_RUN["generator"],
        OLD_RUN["overrides"],
        1796629500.5,
    )
    assert (log.error, log.reason, log.signal, log.stop_reason, log.extra) == (
        None,
        None,
        None,
        None,
        {},
    )
    # every key of the old file comes back as it was; only the version is new
    assert log.to_dict() == {**OLD_RUN, "version": LOG_VERSION}
    assert record.usable and record.summary == OLD_SUMMARY
    assert record.metrics["f1"].value == 0.5 and record.config.value("memory.k") == 1
    assert record.predictions == (PREDICTION,) and record.scores == (SCORE,)
    assert record.usage is not None and record.usage.totals.sent == 8 - 4
    assert job_usage(folder) == {"calls": 4, "usd": 0.25}  # requests sent: calls less cached
    assert record.missing == ()


def test_writing_an_old_log_back_keeps_its_keys_and_adds_the_version(tmp_path: Path) -> None:
    folder = _write_old_folder(tmp_path / "j", {**OLD_RUN, "future_key": {"a": [1]}})
    log = read_log(folder)
    assert log.extra == {"future_key": {"a": [1]}}  # a key this version does not know: kept
    write_log(folder, log)
    written = json.loads((folder / "run.json").read_text())
    assert written.pop("version") == LOG_VERSION
    assert written.pop("heartbeat_unix") >= OLD_RUN["heartbeat_unix"]  # refreshed
    old = {k: v for k, v in OLD_RUN.items() if k != "heartbeat_unix"}
    assert written == {**old, "future_key": {"a": [1]}}
    assert read_log(folder) == log


def test_a_resume_continues_an_old_folder_of_the_same_config(tmp_path: Path) -> None:
    folder = _write_old_folder(tmp_path / "j", {**OLD_RUN, "status": "interrupted"})
    previous = previous_log(folder)
    assert previous is not None and previous.status == "interrupted"
    refuse_foreign(folder, OLD_CONFIG, previous, OLD_RUN["config_hash"], OLD_RUN["dataset_sha256"])
    with pytest.raises(ResumeError, match="holds a run of another config"):
        refuse_foreign(folder, OLD_CONFIG, previous, "0" * 16, OLD_RUN["dataset_sha256"])


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"version": LOG_VERSION + 1}, "a newer recallbench wrote it"),
        ({"version": "1"}, "'version' is not a format number"),
        ({"attempt": "two"}, "'attempt' should be int, got 'two'"),
        ({"git_dirty": 1}, "'git_dirty' should be bool, got 1"),
        ({"n_episodes": True}, "'n_episodes' should be int, got True"),
    ],
)
def test_an_unreadable_log_names_the_file_and_the_key(tmp_path, change, expected) -> None:
    folder = _write_old_folder(tmp_path / "j", {**OLD_RUN, **change})
    with pytest.raises(DatasetFormatError) as err:
        read_run(folder)
    assert str(folder / "run.json") in str(err.value) and expected in str(err.value)
    assert previous_log(folder) is None  # a resume starts over rather than trust it


def test_a_new_run_writes_the_version_and_resumes_an_old_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner writes version 1; a folder whose run.json it rewrites as version 0 (the
    interrupted run of an older recallbench) is resumed: its attempt counts on and its first
    start is kept."""
    cfg, _ = compose_job(
        [
            f"paths.results_dir={tmp_path}",
            "embedder=hashing",
            "generator=extractive",
            "metrics=lexical",
            "progress=false",
            "wandb.mode=disabled",
            "dataset=msc",
            f"dataset.data_dir={FIXTURES}",
            "memory=memory_retrieval",
            "episodes=1",
            "tag=log",
        ]
    )
    monkeypatch.setenv("RECALLBENCH_STAMP", "s")
    folder = Path(run(cfg, "j", {"memory": "memory_retrieval", "dataset": "msc"}))
    info = json.loads((folder / "run.json").read_text())
    assert info["version"] == LOG_VERSION and info["status"] == "finished"
    old = {k: v for k, v in info.items() if k != "version"}
    _dump(folder / "run.json", {**old, "status": "interrupted", "first_started_unix": 1.0})
    for name in ("summary.json", "predictions.jsonl", "scores.jsonl"):
        (folder / name).unlink()
    again = Path(run(cfg, "j", {"memory": "memory_retrieval", "dataset": "msc"}))
    assert again == folder
    log = read_run(folder).provenance.log
    assert (log.version, log.status, log.attempt, log.first_started_unix) == (
        LOG_VERSION,
        "finished",
        info["attempt"] + 1,
        1.0,
    )
    assert isinstance(read_log(folder), RunLog)
