"""A price before the run (issue 23.4): ``plan=true`` counts exactly the calls the real replay then
makes against the stub, sends nothing, and knows what the cache holds; a budget stops a run
cleanly as ``interrupted``, resumable, counting what earlier attempts sent."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from recallbench.cli.plan import total_main
from recallbench.llm.budget import BUDGET_EXIT
from recallbench.testing.stub import StubServer

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"
# Two tables whose calls do not depend on what the model replies (LUFY's importance, summary,
# profile, answer and judge calls are one per turn / session / question), so the plan's dry
# replay must count exactly what the real replay sends.
TABLES = {
    "lufy_table11": ("-m", "experiment=lufy_table11", "judge=llm", "lufy_pair=lufy,naive_rag"),
    "lufy_table13": ("-m", "experiment=lufy_table13", "judge=llm", "memory=lufy,lufy_no_llm"),
}


@pytest.fixture(scope="module")
def stub():
    with StubServer() as server:
        yield server


@pytest.fixture
def openai(stub, monkeypatch):
    monkeypatch.setenv("RECALLBENCH_DATA_DIR", str(FIXTURES))
    monkeypatch.setenv("STUB_KEY", "sk-stub")
    stub.reset_stats()
    return (
        "generator=openai",
        f"generator.base_url={stub.base_url}",
        "generator.api_key_env=STUB_KEY",
        "generator.model=gpt-4o-mini",
        "episodes=1",
        "tag=t",
    )


def _plans(results: Path, stamp: str) -> dict[str, dict]:
    plans = [
        json.loads(p.read_text()) for p in (results / "runs/t" / stamp / "plan").glob("*.json")
    ]
    return {p["job"]: p for p in plans}


def _calls(rows: list[dict]) -> dict[str, int]:
    return {r["task"]: r["calls"] for r in rows}


@pytest.mark.parametrize("table", sorted(TABLES))
def test_the_plan_counts_what_the_real_replay_sends(
    table, run_cli, openai, stub, monkeypatch, tmp_path, capsys
):
    monkeypatch.setenv("RECALLBENCH_STAMP", "plan")
    outcome = run_cli(*TABLES[table], *openai, "plan=true", "plan_latency_s=1.5")
    assert outcome.status == 0, outcome.err
    assert stub.requests == 0  # a plan sends nothing
    assert "plan total over 2 jobs" in outcome.out and "at 1.5 s per call" in outcome.out
    root = tmp_path / "results"
    plans = _plans(root, "plan")
    # the bills sit under the sweep folder (named by job: parallel jobs never race for a name);
    # no run folder is written
    assert len(plans) == 2 and not list((root / "runs" / "t" / "plan").rglob("run.json"))
    # make estimate-table-<x>: one bill over every job the target's invocations left
    total_main([str(root / "runs" / "t" / "plan" / "plan")])
    bill = capsys.readouterr().out
    assert "plan total over the 2 jobs of" in bill
    total = re.search(r"^\s+total\s+([\d,]+)", bill, re.M)
    assert total and int(total[1].replace(",", "")) == sum(
        r["calls"] for p in plans.values() for r in p["rows"]
    )
    broken = root / "broken"
    broken.mkdir()
    (broken / "job.json").write_text("{")
    with pytest.raises(SystemExit, match=r"broken/job\.json: not a job plan"):
        total_main([str(broken)])
    monkeypatch.setenv("RECALLBENCH_STAMP", "real")
    outcome = run_cli(*TABLES[table], *openai)
    assert outcome.status == 0, outcome.err
    to_send = uncached = 0
    for job, plan in plans.items():
        usage = json.loads((root / "runs" / "t" / "real" / job / "usage.json").read_text())
        assert _calls(plan["rows"]) == {t: b["calls"] for t, b in usage["tasks"].items()}, job
        for row in plan["rows"]:
            assert row["cached"] == 0 and (row["usd"] > 0) == (row["calls"] > row["repeats"])
        to_send += sum(r["calls"] - r["repeats"] for r in plan["rows"])
        uncached += sum(r["calls"] for r in plan["rows"])
    assert to_send <= stub.requests <= uncached
    # planned again: the cache now holds every call, nothing is left to send
    monkeypatch.setenv("RECALLBENCH_STAMP", "again")
    sent = stub.requests
    assert run_cli(*TABLES[table], *openai, "plan=true").status == 0 and stub.requests == sent
    again = _plans(root, "again")
    assert {j: _calls(p["rows"]) for j, p in again.items()} == {
        j: _calls(p["rows"]) for j, p in plans.items()
    }
    rows = [r for p in again.values() for r in p["rows"]]
    assert all(r["cached"] == r["calls"] and r["usd"] == 0 for r in rows)


def test_max_calls_stops_the_run_as_interrupted_and_a_resume_counts_what_was_sent(
    run_cli, openai, stub, monkeypatch, tmp_path
):
    args = ("experiment=lufy_table11", "lufy_pair=lufy", "judge=llm", *openai, "job=j")
    monkeypatch.setenv("RECALLBENCH_STAMP", "s")
    outcome = run_cli(*args, "generator.max_calls=10")
    assert outcome.status == BUDGET_EXIT and stub.requests == 10
    assert "stopped by the budget: budget: generator.max_calls=10 reached" in outcome.err
    run_dir = tmp_path / "results" / "runs" / "t" / "s" / "j"
    info = json.loads((run_dir / "run.json").read_text())
    assert info["status"] == "interrupted" and "max_calls=10" in info["reason"]
    # the run's budget covers its attempts: 15 allows 5 more requests, not 15
    # lufy_table11 is a sweep (its config sets the multirun mode): resume names the sweep folder
    outcome = run_cli(*args, "generator.max_calls=15", f"resume_dir={run_dir.parent}")
    assert outcome.status == BUDGET_EXIT and stub.requests == 15
    outcome = run_cli(*args, "generator.max_calls=null", f"resume_dir={run_dir.parent}")
    assert outcome.status == 0, outcome.err
    assert json.loads((run_dir / "run.json").read_text())["status"] in ("finished", "degraded")
    totals = json.loads((run_dir / "usage.json").read_text())["totals"]
    assert totals["calls"] - totals["cached_calls"] == stub.requests  # nothing sent twice


def test_max_usd_stops_the_run_and_a_resume_under_the_same_budget_sends_nothing(
    run_cli, openai, stub, monkeypatch, tmp_path
):
    # one request at a time: the run stops at the first request whose worst case (its prompt at
    # the price + max_tokens at the completion price) no longer fits; a resume counts what the
    # first attempt spent, so under the same budget that same request still does not fit
    args = ("experiment=lufy_table11", "lufy_pair=lufy", "judge=llm", *openai, "job=j")
    price = ("generator.price_per_1m=[1000.0,1000.0]", "generator.concurrency=1")
    monkeypatch.setenv("RECALLBENCH_STAMP", "s")
    outcome = run_cli(*args, *price, "generator.max_usd=0.5")
    assert outcome.status == BUDGET_EXIT, outcome.err
    assert "stopped by the budget: budget: generator.max_usd=0.5 reached" in outcome.err
    sent = stub.requests
    assert 0 < sent
    run_dir = tmp_path / "results" / "runs" / "t" / "s" / "j"
    info = json.loads((run_dir / "run.json").read_text())
    assert info["status"] == "interrupted" and "max_usd=0.5" in info["reason"]
    spent = json.loads((run_dir / "usage.json").read_text())["totals"]["cost_usd"]
    # nothing was in flight (one at a time), and what was paid + the refused call's worst > 0.5
    said = re.search(
        r"\$([\d.]+) spent, \$([\d.]+) in flight, the next call may cost \$([\d.]+)", outcome.err
    )
    assert said is not None, outcome.err
    paid, in_flight, worst = map(float, said.groups())
    assert in_flight == 0 and paid == pytest.approx(spent, abs=1e-4) and 0 < spent <= 0.5
    assert paid + worst > 0.5 and worst < 0.5  # it stopped because of the budget, not sooner
    outcome = run_cli(*args, *price, "generator.max_usd=0.5", f"resume_dir={run_dir.parent}")
    assert outcome.status == BUDGET_EXIT and stub.requests == sent, outcome.err
