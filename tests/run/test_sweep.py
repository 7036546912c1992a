"""A sweep you can look at (issue 34): sweep.json per job, `recallbench status`, the submitting
process's exit after jobs in workers stopped."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time

import pytest

from recallbench.cli.sweep import status_main, sweep_exit
from recallbench.errors import ConfigError
from recallbench.run.sweep import read_sweep, record_job, worst_exit
from recallbench.store import SqliteStore


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_status_prints_every_job_the_spend_and_the_resume_command(tmp_path, capsys):
    sweep = tmp_path / "runs" / "t" / "20260101-000000"
    resume = f"recallbench -m memory.k=1,2,3,4 resume_dir={sweep}"
    budget = {"max_usd": 1.5, "max_calls": None}
    record_job(sweep, "k1", status="running", host=platform.node(), pid=os.getpid())
    record_job(sweep, "k1", status="finished", attempt=1, calls=10, usd=0.25)
    record_job(sweep, "k2", status="interrupted", attempt=2, calls=4, usd=0.5, budget=budget)
    record_job(sweep, "k2", reason="budget: sweep.max_usd=1.5 reached", resume=resume)
    dead, here, name = _dead_pid(), platform.node(), "sweep:t/20260101-000000"
    record_job(sweep, "k3", status="running", host=here, pid=dead)
    record_job(sweep, "k2", host="another-node", pid=7)  # ended (interrupted) on another node
    ledger = SqliteStore(tmp_path / "cache" / "store.sqlite")
    for usd, holder in (
        (0.25, f"{here}:{dead}"),
        (0.25, "another-node:1"),
        (0.5, "another-node:7"),
    ):
        ledger.reserve(name, usd, None, None, holder)  # reserved, never settled
    for _ in range(14):
        ledger.reserve(name, 0.1, None, None, f"{here}:{os.getpid()}")
        ledger.settle(name, 0.1, 0.75 / 14, f"{here}:{os.getpid()}", tokens=100)
    ledger.close()
    record_job(sweep, "k4", status="running", host="another-node", pid=1, store="sqlite")
    record_job(sweep, "k4", ledger=f"sqlite:{tmp_path / 'cache' / 'store.sqlite'}")
    data = read_sweep(sweep / "sweep.json")
    assert data["sweep"] == "t/20260101-000000" and data["budget"] == budget
    assert data["store"] == "sqlite" and data["resume"] == resume
    assert data["jobs"]["k2"]["attempt"] == 2 and "budget" not in data["jobs"]["k2"]
    status_main([str(sweep)])
    out = capsys.readouterr().out.splitlines()
    assert out[1].split()[:2] == ["finished", "k1"] and "10 requests, $0.2500" in out[1]
    assert out[2].split()[:2] == ["interrupted", "k2"] and "(budget: sweep.max_usd" in out[2]
    assert out[3].split()[:2] == ["died", "k3"]  # its pid is gone on this host
    assert out[4].split()[:2] == ["running", "k4"]  # another host: trusted
    assert out[5] == "jobs: 1 died, 1 finished, 1 interrupted, 1 running"
    assert out[6] == "jobs' usage: 14 requests, $0.7500; sweep budget: sweep.max_usd=1.5"
    assert out[7] == (
        "sweep ledger: 17 requests sent, 1400 tokens, $0.7500 spent, $1.0000 reserved and not "
        "settled"
    )
    assert out[8] == (
        f"  reserved by: another-node:1 $0.2500, another-node:7 $0.5000 (gone), {here}:{dead} "
        "$0.2500 (gone)"
    )
    assert out[9].startswith("difference: 3 request(s), $0.0000 the ledger counted are in no")
    assert "killed before it recorded them (1 job(s) died without recording theirs)" in out[9]
    assert out[10].startswith("$0.7500 is reserved by 2 process(es) that are gone")
    assert out[11] == f"resume the rest with: {resume}"
    status_main([str(sweep), "--release"])
    out = capsys.readouterr().out.splitlines()
    assert "$0.2500 reserved and not settled" in out[7]
    assert out[8] == "  reserved by: another-node:1 $0.2500"  # its job runs: trusted
    assert out[-1] == (
        "recallbench: released $0.7500 of sweep t/20260101-000000 reserved by 2 process(es) "
        f"that are gone (another-node:7, {here}:{dead})"
    )


def test_status_of_a_folder_without_state_is_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        status_main([str(tmp_path)])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no sweep.json" in err[0]
    (tmp_path / "sweep.json").write_text("{")
    with pytest.raises(ConfigError, match="not a sweep state file"):
        read_sweep(tmp_path / "sweep.json")


def test_the_submitting_process_exits_75_when_a_job_of_this_invocation_stopped(tmp_path, capsys):
    sweep = tmp_path / "t" / "s"
    record_job(sweep, "old", status="interrupted", resume="recallbench -m ... resume_dir=x")
    since = time.time()
    sweep_exit([sweep], since)  # an earlier invocation's job: nothing to say
    record_job(sweep, "new", status="finished")
    sweep_exit([sweep], since)
    assert capsys.readouterr().err == ""
    record_job(sweep, "stopped", status="interrupted")
    with pytest.raises(SystemExit) as stop:
        sweep_exit([sweep, tmp_path / "absent"], since)
    assert stop.value.code == 75
    err = capsys.readouterr().err
    assert "1 job(s) of the sweep stopped interrupted (stopped; jobs: 1 finished, 1 in" in err
    assert err.rstrip().endswith("resume with: recallbench -m ... resume_dir=x")
    assert json.loads((sweep / "sweep.json").read_text())["jobs"]["new"]["status"] == "finished"


@pytest.mark.parametrize(
    ("statuses", "code"),
    [
        ([], 0),
        (["finished", "degraded"], 0),
        (["finished", "interrupted"], 75),
        (["interrupted", "interrupted"], 75),
        (["interrupted", "failed", "finished"], 1),
        (["died", "interrupted"], 1),  # killed without a trace: no one knows it can resume
        (["running"], 1),  # still "running" once its launcher returned: it never ended
        (["finished", "?"], 1),
    ],
)
def test_the_worst_outcome_of_a_sweeps_jobs_is_its_exit(statuses, code):
    # the SLURM path's exit is this function over sweep.json (sweep_exit), as for every launcher
    assert worst_exit(statuses) == code


def test_the_submitting_process_exits_1_when_a_job_failed_or_died_even_if_others_stopped(
    tmp_path, capsys
):
    sweep = tmp_path / "t" / "s"
    since = time.time()
    record_job(sweep, "stopped", status="interrupted")
    record_job(sweep, "broken", status="failed", reason="DataNotFoundError: ...")
    with pytest.raises(SystemExit) as stop:
        sweep_exit([sweep], since, ["-m", "memory.k=1,2"])
    assert stop.value.code == 1
    err = capsys.readouterr().err
    assert "1 job(s) of the sweep failed or died (broken; jobs: 1 failed, 1 interrupted)" in err
    assert err.rstrip().endswith(
        f"fix them and resume with: recallbench -m memory.k=1,2 resume_dir={sweep}"
    )
    record_job(sweep, "broken", status="running", host=platform.node(), pid=_dead_pid())
    with pytest.raises(SystemExit) as stop:
        sweep_exit([sweep], since)
    assert (
        stop.value.code == 1 and "(broken; jobs: 1 died, 1 interrupted)" in capsys.readouterr().err
    )
