"""Issue 22's user-facing cases, one row each: exit status, the ONE line, no traceback.

Config mistakes of every group (item 3) are refused before any work starts (no run folder);
resuming (item 2) a sweep, a finished run and a wrong folder. Item 5 (a run on a working tree
with uncommitted changes says so) is tested with the module that decides it,
tests/run/test_provenance.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"

MSC = ("dataset=msc", "memory=no_memory", "generator=extractive", "episodes=1")
# (id, argv, substrings the one line must contain)
MISTAKES = [
    ("memory-misspelt", [*MSC, "memory=recent_turns"], ("recent_turns", "Options")),
    ("memory-key-not-in-struct", [*MSC, "memory=memory_retrieval", "memory.kk=3"],
     ("memory.kk=3", "memory (memory_retrieval) has no key 'kk'", "Did you mean 'k'")),
    ("memory-key-added-with-plus", [*MSC, "memory=memory_retrieval", "+memory.kk=3"],
     ("memory.kk=3", "no such key", "Did you mean 'k'")),
    ("memory-value-not-int", [*MSC, "memory=memory_retrieval", "memory.k=abc"],
     ("memory.k='abc'", "expected an integer")),
    ("memory-value-float-for-int", [*MSC, "memory=memory_retrieval", "memory.k=2.5"],
     ("memory.k=2.5", "expected an integer")),
    ("memory-bool", [*MSC, "memory=lufy", "memory.profile=maybe"],
     ("memory.profile='maybe'", "true or false")),
    ("generator-key", [*MSC, "generator.max_tokns=5"],
     ("generator.max_tokns=5", "Did you mean 'max_tokens'")),
    ("generator-value", [*MSC, "generator=openai", "generator.concurrency=many"],
     ("generator.concurrency='many'", "an integer")),
    ("generator-secret", [*MSC, "+generator.api_key=sk-123"], ("looks like a secret",)),
    ("embedder-value", [*MSC, "embedder.batch_size=big"],
     ("embedder.batch_size='big'", "an integer")),
    ("dataset-option-key", [*MSC, "dataset.options.splt=test"],
     ("dataset.options.splt=test", "Did you mean 'split'")),
    ("dataset-option-value", [*MSC, "dataset.options.max_sessions=two"],
     ("dataset.options.max_sessions='two'", "an integer or null")),
    ("protocol-value", [*MSC, "protocol.max_tokens=x"],
     ("protocol.max_tokens='x'", "an integer")),
    ("judge-value", [*MSC, "+judge=llm", "judge.fallback=wrong"],
     ("judge.fallback='wrong'", "an integer")),
    ("top-level-key", [*MSC, "epsiodes=2"], ("epsiodes=2", "Did you mean 'episodes'")),
    ("run-key-value", [*MSC, "seed=x"], ("seed='x'", "an integer")),
    ("sweep-without-m", [*MSC, "memory=no_memory,full_history"],
     ("memory=no_memory,full_history", "add -m")),
    ("sweep-job-value", ["-m", *MSC, "memory=memory_retrieval,full_history", "memory.k=x"],
     ("memory.k='x'", "an integer", "sweep job")),
    ("resume-not-a-folder", [*MSC, "resume_dir=/nonexistent/run"],
     ("resume_dir=/nonexistent/run", "no such folder")),
]  # fmt: skip


@pytest.mark.parametrize("argv,needles", [m[1:] for m in MISTAKES], ids=[m[0] for m in MISTAKES])
def test_config_mistake_is_one_line_exit_2_before_any_work(
    run_cli, monkeypatch, tmp_path, argv, needles
):
    monkeypatch.setenv("RECALLBENCH_DATA_DIR", str(FIXTURES))
    outcome = run_cli(*argv)
    assert outcome.status == 2, outcome.err
    (line,) = outcome.error_lines
    for needle in needles:
        assert needle in line, line
    assert "Traceback" not in outcome.err
    assert not (tmp_path / "results" / "runs").exists()  # nothing started


def _outputs(run_dir: Path) -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in (run_dir / "predictions.jsonl").open()]
    return [(r["pred_id"], r["output"]) for r in rows]


def _job(run_dir: Path) -> dict:
    return json.loads((run_dir / "run.json").read_text())


def test_a_sweep_resumes_with_one_command_skipping_finished_jobs(run_cli, monkeypatch, tmp_path):
    monkeypatch.setenv("RECALLBENCH_DATA_DIR", str(FIXTURES))
    monkeypatch.setenv("RECALLBENCH_STAMP", "s")
    sweep = ("-m", *MSC[:1], "generator=extractive", "episodes=2", "memory=no_memory,full_history")
    assert run_cli(*sweep).status == 0
    folder = tmp_path / "results" / "runs" / "adhoc" / "s"
    done, cut = folder / "msc-no_memory-extractive", folder / "msc-full_history-extractive"
    before = (done / "run.json").read_text()
    predictions = _outputs(cut)
    # the second job was stopped after one episode: its record says interrupted
    victim = sorted((cut / "items").glob("*.jsonl"))[1]
    victim.unlink()
    (cut / "run.json").write_text(json.dumps({**_job(cut), "status": "interrupted"}))

    monkeypatch.setenv("RECALLBENCH_STAMP", "another")  # resuming does not depend on the stamp
    outcome = run_cli(*sweep, f"resume_dir={folder}")
    assert outcome.status == 0, outcome.err
    assert (done / "run.json").read_text() == before  # finished: not run, not re-scored
    assert f"{done} already finished: nothing to run or score" in outcome.err
    assert _job(cut)["status"] == "finished" and _job(cut)["attempt"] == 2
    assert _outputs(cut) == predictions
    assert not (tmp_path / "results" / "runs" / "adhoc" / "another").exists()


@pytest.mark.parametrize(
    "sweep,pick,needle",
    [
        (False, "sweep", "holds the sweep jobs msc-full_history-extractive"),
        (True, "job", "one run of a sweep; resume the whole sweep with -m"),
    ],
    ids=["sweep-folder-without-m", "job-folder-with-m"],
)
def test_resume_folder_of_the_wrong_kind_is_one_line(
    run_cli, monkeypatch, tmp_path, sweep, pick, needle
):
    monkeypatch.setenv("RECALLBENCH_DATA_DIR", str(FIXTURES))
    monkeypatch.setenv("RECALLBENCH_STAMP", "s")
    assert run_cli("-m", *MSC, "memory=no_memory,full_history").status == 0
    folder = tmp_path / "results" / "runs" / "adhoc" / "s"
    target = folder if pick == "sweep" else folder / "msc-no_memory-extractive"
    args = ["-m", *MSC, "memory=no_memory,full_history"] if sweep else list(MSC)
    outcome = run_cli(*args, f"resume_dir={target}")
    assert outcome.status == 2
    (line,) = outcome.error_lines
    assert needle in line and "Traceback" not in outcome.err


def test_resume_command_of_an_interrupted_sweep_job_names_the_sweep():
    from recallbench import cli

    argv = ["-m", "memory=no_memory,full_history", "episodes=2"]  # Launch.argv: as typed
    command = cli.resume_command(Path("results/runs/adhoc/s/msc-no_memory-extractive"), True, argv)
    assert command == (
        "recallbench -m memory=no_memory,full_history episodes=2 resume_dir=results/runs/adhoc/s"
    )
    single = cli.resume_command(Path("results/runs/adhoc/s/j"), False)
    assert single.endswith("resume_dir=results/runs/adhoc/s/j") and " -m " not in single
