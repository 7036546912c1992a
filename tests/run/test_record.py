"""The run record stays honest: corrupt items are redone, unparsed replies degrade a run,
a dead process's ``running`` record reads stale, usage adds up over attempts (issue 15)."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from recallbench.analysis import find_runs
from recallbench.run.record import HealthPolicy, add_usage, health_problems, is_stale
from recallbench.tables.engine import degraded_notes
from recallbench.testing.stub import StubServer

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"
MSC = ("dataset=msc", "memory=no_memory", "generator=extractive", "tag=t", "job=j")


def _outputs(run_dir: Path) -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in (run_dir / "predictions.jsonl").open()]
    return [(r["pred_id"], r["output"]) for r in rows]


def _run_dir(results: Path) -> Path:
    return next(results.glob("runs/t/*/j"))


def test_corrupt_items_file_is_set_aside_and_redone(run_cli, monkeypatch, tmp_path):
    monkeypatch.setenv("RECALLBENCH_DATA_DIR", str(FIXTURES))
    assert run_cli(*MSC).status == 0
    run_dir = _run_dir(tmp_path / "results")
    before = _outputs(run_dir)
    victim = sorted((run_dir / "items").glob("*.jsonl"))[0]
    victim.write_text(victim.read_text()[:40])  # cut mid-record
    info = json.loads((run_dir / "run.json").read_text())  # as a run killed while writing it
    (run_dir / "run.json").write_text(json.dumps({**info, "status": "interrupted"}))
    outcome = run_cli(*MSC, f"resume_dir={run_dir}")
    assert outcome.status == 0, outcome.err
    info = json.loads((run_dir / "run.json").read_text())
    assert info["status"] == "finished" and info["attempt"] == 2
    assert [r["items"] for r in info["redone_episodes"]] == [victim.name]
    assert (run_dir / "items" / f"{victim.name}.corrupt-2").exists()
    assert _outputs(run_dir) == before


def test_unparsed_replies_mark_the_run_degraded(run_cli, monkeypatch, tmp_path):
    """The stub echoes prompts, so THEANINE's relation-linking replies never parse."""
    monkeypatch.setenv("RECALLBENCH_DATA_DIR", str(FIXTURES))
    monkeypatch.setenv("STUB_KEY", "sk-stub")
    with StubServer() as stub:
        outcome = run_cli(
            "dataset=msc",
            "memory=theanine",
            "episodes=1",
            "generator=openai",
            f"generator.base_url={stub.base_url}",
            "generator.api_key_env=STUB_KEY",
            "generator.model=stub-model",
            "tag=t",
            "job=j",
        )
    assert outcome.status == 0, outcome.err
    run_dir = _run_dir(tmp_path / "results")
    info = json.loads((run_dir / "run.json").read_text())
    assert info["status"] == "degraded"
    tasks = {p["task"] for p in info["health"] if p["kind"] == "parse_failures"}
    assert "theanine.link_relation" in tasks
    usage = json.loads((run_dir / "usage.json").read_text())
    samples = usage["unparsed_samples"]["theanine.link_relation"]
    assert 1 <= len(samples) <= 3 and samples[0].startswith("echo ")
    warning = [ln for ln in outcome.err.splitlines() if ln.startswith("recallbench: warning")]
    warning = [ln for ln in warning if "uncommitted" not in ln]  # a dirty checkout warns too
    assert len(warning) == 1 and "theanine.link_relation" in warning[0]
    # tables use degraded runs but say so
    runs = find_runs(tmp_path / "results", "t")
    assert [r.status for r in runs] == ["degraded"]
    (note,) = degraded_notes(runs)
    assert "DEGRADED run j" in note and "theanine.link_relation" in note


def test_health_policy_thresholds():
    usage = {
        "tasks": {
            "a": {"calls": 100, "parse_failures": 5, "failures": 0},  # 5% is allowed
            "b": {"calls": 100, "parse_failures": 6, "failures": 0},
            "c": {"calls": 50, "parse_failures": 0, "failures": 2},  # 4% > 2%
        }
    }
    problems = health_problems(usage, HealthPolicy())
    assert [(p["task"], p["kind"], p["n"]) for p in problems] == [
        ("b", "parse_failures", 6),
        ("c", "failures", 2),
    ]
    assert health_problems(usage, HealthPolicy(0.1, 0.05)) == []


def test_add_usage_sums_numbers_and_keeps_unknown_cost_unknown():
    a = {"totals": {"calls": 3, "cost_usd": 0.5, "latency_s": 1.25}, "unparsed_samples": {}}
    b = {"totals": {"calls": 2, "cost_usd": None, "latency_s": 0.5}, "unparsed_samples": {}}
    c = {"totals": {"calls": 4, "cost_usd": 0.25, "latency_s": 0.0}}
    assert add_usage(a, c)["totals"] == {"calls": 7, "cost_usd": 0.75, "latency_s": 1.25}
    assert add_usage(a, b)["totals"]["cost_usd"] is None


def test_running_record_of_a_dead_process_is_stale(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead_pid = int(proc.stdout)
    here = platform.node()
    now = time.time()
    assert is_stale({"status": "running", "pid": dead_pid, "host": here, "heartbeat_unix": now})
    assert not is_stale({"status": "running", "pid": os.getpid(), "host": here})
    assert not is_stale({"status": "finished", "pid": dead_pid, "host": here})
    other = {"status": "running", "pid": 1, "host": "elsewhere"}
    assert not is_stale({**other, "heartbeat_unix": now - 60}, now=now)
    assert is_stale({**other, "heartbeat_unix": now - 7 * 3600}, now=now)
    # analysis reads such a folder as stale, and tables do not use it
    run_dir = tmp_path / "runs" / "t" / "s" / "j"
    run_dir.mkdir(parents=True)
    (run_dir / "run.json").write_text(
        json.dumps({"status": "running", "pid": dead_pid, "host": here, "heartbeat_unix": now})
    )
    assert [r.status for r in find_runs(tmp_path, "t", finished=False)] == ["stale"]
    assert find_runs(tmp_path, "t") == []
