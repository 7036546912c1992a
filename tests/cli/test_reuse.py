"""A finished run comes back instead of running again; only what changed runs (issue 38).

A job whose newest finished run has the same config hash, code, packages and data is reused
(``run.resume.reusable_run``); a command repeated as is returns its runs without composing its
jobs (``cli.reuse``); ``RECALLBENCH_RERUN=1`` (``make ... RERUN=1``) runs every job again.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

CHEAP = ("generator=extractive", "episodes=1", "embedder=hashing", "metrics=lexical")
SWEEP = ("-m", "memory=memory_retrieval", *CHEAP)


def _runs(results: Path) -> dict[str, list[str]]:
    """job -> the stamps holding a run of it."""
    found: dict[str, list[str]] = {}
    for info in sorted(results.glob("runs/adhoc/*/*/run.json")):
        found.setdefault(info.parent.name, []).append(info.parent.parent.name)
    return found


def test_rerun_runs_only_the_changed_job_and_rerun_runs_all(
    run_cli, monkeypatch, tmp_path, data_copy
):
    monkeypatch.setenv("RECALLBENCH_DATA_DIR", str(data_copy))
    monkeypatch.delenv("RECALLBENCH_RERUN", raising=False)
    results = tmp_path / "results"

    def sweep(stamp: str, *extra: str):
        monkeypatch.setenv("RECALLBENCH_STAMP", stamp)
        outcome = run_cli(*SWEEP, *extra, results=results)
        assert outcome.status == 0, outcome.err
        return outcome

    sweep("s1", "memory.k=1,6")
    first = _runs(results)
    assert first == {
        "msc-memory_retrieval-extractive-memory.k_1": ["s1"],
        "msc-memory_retrieval-extractive-memory.k_6": ["s1"],
    }
    summary = results / "runs/adhoc/s1/msc-memory_retrieval-extractive-memory.k_1/summary.json"
    before = summary.read_bytes()

    # the same command again: both runs come back, nothing runs, nothing is rewritten
    again = sweep("s2", "memory.k=1,6")
    assert _runs(results) == first
    assert again.err.count("reusing") == 2 and summary.read_bytes() == before
    assert sorted(again.out.split()) == sorted(
        str(results / "runs/adhoc/s1" / job) for job in first
    )

    # one job's config changes (k=6 -> k=2): only that job runs; k=1 is reused
    changed = sweep("s3", "memory.k=1,2")
    runs = _runs(results)
    assert runs["msc-memory_retrieval-extractive-memory.k_2"] == ["s3"]
    assert runs["msc-memory_retrieval-extractive-memory.k_1"] == ["s1"]
    assert "reusing" in changed.err and changed.err.count("reusing") == 1

    # RERUN: every job runs again, into the new stamp
    monkeypatch.setenv("RECALLBENCH_RERUN", "1")
    sweep("s4", "memory.k=1,2")
    runs = _runs(results)
    assert runs["msc-memory_retrieval-extractive-memory.k_1"] == ["s1", "s4"]
    assert runs["msc-memory_retrieval-extractive-memory.k_2"] == ["s3", "s4"]
    new = results / "runs/adhoc/s4/msc-memory_retrieval-extractive-memory.k_1/summary.json"
    assert json.loads(new.read_text())["metrics"] == json.loads(before)["metrics"]


def test_changed_data_reruns_only_the_jobs_it_feeds(run_cli, monkeypatch, tmp_path, data_copy):
    monkeypatch.setenv("RECALLBENCH_DATA_DIR", str(data_copy))
    monkeypatch.delenv("RECALLBENCH_RERUN", raising=False)
    results = tmp_path / "results"
    argv = ("-m", "dataset=msc,cc", "memory=memory_retrieval", *CHEAP)
    monkeypatch.setenv("RECALLBENCH_STAMP", "a")
    assert run_cli(*argv, results=results).status == 0
    # the first utterance of every Conversation Chronicles dialogue changes: cc's episode differs
    cc = data_copy / "conversation_chronicles" / "test.jsonl"
    rows = [json.loads(line) for line in cc.read_text().splitlines() if line.strip()]
    for row in rows:
        row["first_session_dialogue"][0] += " Indeed."
    cc.write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setenv("RECALLBENCH_STAMP", "b")
    outcome = run_cli(*argv, results=results)
    assert outcome.status == 0, outcome.err
    assert _runs(results) == {
        "msc-memory_retrieval-extractive": ["a"],
        "cc-memory_retrieval-extractive": ["a", "b"],
    }
    old, new = (
        json.loads(
            (results / f"runs/adhoc/{s}/cc-memory_retrieval-extractive/run.json").read_text()
        )
        for s in "ab"
    )
    assert old["dataset_sha256"] != new["dataset_sha256"]


def test_reproduce_answers_warm_steps_without_a_process(
    run_cli, monkeypatch, tmp_path, data_copy, capsys
):
    """``make reproduce-*`` warm: a sweep that finished as is and a table whose inputs did not
    change are answered by reproduce itself (one Python start-up per target, not three)."""
    from recallbench.cli import reproduce
    from recallbench.cli.reproduce import Step
    from recallbench.cli.table import table_main

    monkeypatch.setenv("RECALLBENCH_DATA_DIR", str(data_copy))
    monkeypatch.delenv("RECALLBENCH_RERUN", raising=False)
    results = tmp_path / "results"
    assert run_cli(*SWEEP, results=results).status == 0
    (record,) = (results / "cache" / "commands").glob("*.json")
    flag, *words = json.loads(record.read_text())["argv"]
    assert flag == "-m"
    sweep = Step("sweep", tuple(words), multirun=True)
    capsys.readouterr()

    assert reproduce.answered(sweep)  # replayed: its run folder, as the command prints
    (run_json,) = results.glob("runs/adhoc/*/*/run.json")
    assert capsys.readouterr().out.split() == [str(run_json.parent)]
    # The same words as another step are another command: each runs as its own process.
    assert not reproduce.answered(Step("sweep", sweep.words))  # no -m: one job, not this sweep
    assert not reproduce.answered(Step("script", tuple(sweep.argv[1:])))  # a script always runs
    assert not reproduce.answered(Step("sweep", (*words[:-1], "episodes=2"), multirun=True))
    assert not reproduce.answered(Step("sweep", (*words, "plan=true"), multirun=True))
    assert not reproduce.answered(Step("sweep", ("--verbose", *words), multirun=True))

    table = ("carecall_table1", f"paths.results_dir={results}", f"paths.data_dir={data_copy}")
    assert not reproduce.answered(Step("table", table))  # never rendered: render it
    table_main(list(table))
    printed = capsys.readouterr().out.split()
    assert reproduce.answered(Step("table", table))
    assert sorted(capsys.readouterr().out.split()) == sorted(printed)
    assert not reproduce.answered(Step("script", tuple(Step("table", table).argv[1:])))
    Path(printed[0]).write_text("edited")  # a file no longer as written: render again
    assert not reproduce.answered(Step("table", table))


def test_a_release_number_alone_does_not_rerun_but_another_package_version_does(
    run_cli, monkeypatch, tmp_path, data_copy
):
    """A run recorded under another recallbench version number is reused when its code is
    unchanged (the number changes with every release; the code is keyed file by file); a run
    recorded under another torch runs again."""
    monkeypatch.setenv("RECALLBENCH_DATA_DIR", str(data_copy))
    monkeypatch.delenv("RECALLBENCH_RERUN", raising=False)
    results = tmp_path / "results"
    job = "msc-memory_retrieval-extractive"

    def run(stamp: str):
        monkeypatch.setenv("RECALLBENCH_STAMP", stamp)
        # compose the job again (no replay of the command's record): the run's identity decides
        shutil.rmtree(results / "cache" / "commands", ignore_errors=True)
        outcome = run_cli("memory=memory_retrieval", *CHEAP, results=results)
        assert outcome.status == 0, outcome.err
        return outcome

    def record(stamp: str, package: str, version: str) -> None:
        path = results / "runs/adhoc" / stamp / job / "run.json"
        info = json.loads(path.read_text())
        info["versions"][package] = version
        path.write_text(json.dumps(info))

    run("s1")
    record("s1", "recallbench", "0.0.1")  # as an older release wrote it
    assert "reusing" in run("s2").err
    assert _runs(results) == {job: ["s1"]}

    record("s1", "torch", "0.0.1")  # another torch: its numbers may differ
    assert "reusing" not in run("s3").err
    assert _runs(results) == {job: ["s1", "s3"]}
