"""``run.job.run_job``: a job's lifecycle as a Python call (a notebook's, the matrix's, the
command line's), with the parts only ``cli`` builds injected (``cli.job.HydraParts``).

A job runs, is then reused (said in one line), and a resume of its finished folder does
nothing; a budget stop is an outcome that carries the exit a command owes (75), recorded in
``sweep.json``, never an exit of the caller's process.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from recallbench.cli import compose_job
from recallbench.cli.build import plain
from recallbench.cli.job import HydraParts
from recallbench.cli.launch import Launch
from recallbench.run.job import REUSED, JobOutcome, run_job
from recallbench.run.read import read_run
from recallbench.run.sweep import read_sweep
from recallbench.testing.stub import StubServer

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"
BASE = ("dataset=msc", "memory=memory_retrieval", "embedder=hashing", "episodes=1")


def _job(tmp_path: Path, *overrides: str) -> tuple[dict[str, object], HydraParts]:
    cfg, _ = compose_job(
        [
            *BASE,
            f"dataset.data_dir={FIXTURES}",
            f"paths.results_dir={tmp_path / 'results'}",
            f"paths.cache_dir={tmp_path / 'cache'}",
            "progress=false",
            "wandb.mode=disabled",
            "tag=t",
            *overrides,
        ]
    )
    config = plain(cfg)
    config.update(job="j", choices={"memory": "memory_retrieval"}, overrides=list(overrides))
    return config, HydraParts(cfg, Launch.here([]), "j")


def test_a_job_runs_then_is_reused_then_a_resume_does_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("RECALLBENCH_RERUN", raising=False)
    said: list[str] = []
    config, parts = _job(tmp_path, "generator=extractive", "metrics=lexical", "stamp=a")
    ran = run_job(config, "j", parts, say=said.append)
    folder = tmp_path / "results" / "runs" / "t" / "a" / "j"
    assert ran == JobOutcome(folder, "ran") and ran.recorded
    assert read_run(folder).status == "finished"
    assert read_sweep(folder.parent / "sweep.json")["jobs"]["j"]["status"] == "finished"
    config, parts = _job(tmp_path, "generator=extractive", "metrics=lexical", "stamp=b")
    said.clear()
    reused = run_job(config, "j", parts, say=said.append)
    assert reused == JobOutcome(folder, "reused")  # the newest finished run of the same job
    assert said == [f"recallbench: j: reusing {folder} ({REUSED})"]
    assert not (tmp_path / "results" / "runs" / "t" / "b").exists()
    config["resume_dir"] = str(folder)
    said.clear()
    again = run_job(config, "j", parts, say=said.append)
    assert again == JobOutcome(folder, "already")
    assert said == [
        f"recallbench: {folder} already finished: nothing to run or score (a new run: drop "
        "resume_dir)"
    ]


@pytest.mark.parametrize("sweep", [False, True])
def test_a_budget_stop_is_an_outcome_with_the_exit_it_asks(tmp_path, monkeypatch, sweep):
    monkeypatch.setenv("STUB_KEY", "sk-stub")
    with StubServer() as stub:
        config, parts = _job(
            tmp_path,
            "generator=openai",
            f"generator.base_url={stub.base_url}",
            "generator.api_key_env=STUB_KEY",
            "generator.model=gpt-4o-mini",
            "generator.max_calls=1",
            "stamp=s",
        )
        said: list[str] = []
        outcome = run_job(config, "j", parts, sweep=sweep, argv=["x=1"], say=said.append)
    folder = tmp_path / "results" / "runs" / "t" / "s" / "j"
    # outside a sweep the caller owes exit 75; a sweep's job returns so its others go on
    assert outcome == JobOutcome(folder, "stopped", None if sweep else 75)
    assert not outcome.recorded
    log = read_run(folder).provenance.log
    assert log.status == "interrupted" and "max_calls=1" in (log.reason or "")
    entry = read_sweep(folder.parent / "sweep.json")["jobs"]["j"]
    assert entry["status"] == "interrupted" and entry["calls"] == 1
    resume = (
        f"recallbench -m x=1 resume_dir={folder.parent}"
        if sweep
        else (f"recallbench x=1 resume_dir={folder}")
    )
    assert len(said) == 1 and said[0].startswith("recallbench: stopped by the budget: ")
    assert said[0].endswith(f"raise it and resume with: {resume}")
