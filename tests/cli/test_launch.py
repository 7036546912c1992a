"""How a command's jobs learn how they were launched: a ``Launch`` argument, not the environment."""

from __future__ import annotations

import os
from pathlib import Path

from recallbench.cli import Launch, resume_command
from recallbench.cli.plan import take_plan_args

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"
INTERNAL = ("RECALLBENCH_ARGV", "RECALLBENCH_SWEPT", "RECALLBENCH_PLAN", "RECALLBENCH_PLAN_DIR")
INTERNAL += ("RECALLBENCH_MAIN_PID",)


def test_a_job_in_another_process_is_a_worker():
    assert not Launch.here(["x=1"]).in_worker() and Launch.here(["x=1"]).argv == ("x=1",)
    assert Launch(main_pid=os.getpid() + 1).in_worker()  # the submitting process is another
    assert not Launch().in_worker()  # no submitting process known: a job on its own


def test_plan_arguments_come_back_as_values_and_touch_no_environment(monkeypatch):
    for key in INTERNAL:
        monkeypatch.delenv(key, raising=False)
    rest, latency = take_plan_args(["recallbench", "plan=true", "plan_latency_s=1.5", "x=1"])
    assert (rest, latency) == (["recallbench", "x=1"], 1.5)
    assert take_plan_args(["recallbench", "plan=false"]) == (["recallbench"], None)
    assert not [k for k in INTERNAL if k in os.environ]


def test_the_resume_command_is_the_command_as_typed():
    argv = ("-m", "memory=no_memory,full_history", "stamp=s", "episodes=2")
    assert resume_command(Path("runs/t/s/job"), True, argv) == (
        "recallbench -m memory=no_memory,full_history episodes=2 resume_dir=runs/t/s"
    )


def test_a_command_leaves_no_state_in_the_environment(run_cli, monkeypatch):
    for key in INTERNAL:
        monkeypatch.delenv(key, raising=False)
    outcome = run_cli("-m", "memory=no_memory,full_history", f"dataset.data_dir={FIXTURES}",
                      "episodes=1", "embedder=hashing", "metrics.names=[rouge_l]",
                      "wandb.mode=disabled")  # fmt: skip
    assert outcome.status == 0, outcome.err[-2000:]
    assert len([line for line in outcome.out.splitlines() if "/runs/" in line]) == 2
    assert not [k for k in INTERNAL if k in os.environ]
