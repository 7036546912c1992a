"""The matrix tables on hand-built runs: shape (methods x the settings that report the metric),
unavailable cells carry their reason, and the paired test against the reference method gives
the exact sign-flip p-values worked out by hand; the cost table and its Pareto figure."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from recallbench.errors import DataNotFoundError
from recallbench.io import write_json
from recallbench.metrics.bootstrap import Additive, ci_fields
from recallbench.tables import TableContext, reproduce
from recallbench.tables.matrix import load_plan, short_reason
from recallbench.tables.spec import parse_spec

EPISODES = [f"toy/{i}" for i in range(7)]
# per-episode F1 (one question each): the reference is wrong everywhere; "Good" right everywhere
# (7 differences of +1); "Mixed" right in episodes 0, 2, 4 (differences +1, 0, +1, 0, +1, 0, 0)
F1 = {
    "no_memory": [0.0] * 7,
    "good": [1.0] * 7,
    "mixed": [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0],
}
GOLD_REASON = "needs gold memory (toy sample has none)"


def _entry(values: list[float]) -> dict:
    stat = Additive.from_items(EPISODES, [[v, 1.0] for v in values], {"fn": "ratio"})
    return {"value": sum(values) / len(values), "n": len(values), **ci_fields(stat)}


def _run(results: Path, memory: str, values: list[float]) -> None:
    run = results / "runs" / "matrix" / "20260101-000000" / f"toy_qa-{memory}"
    run.mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"status": "finished", "n_episodes": 7}))
    config = {
        "choices": {"memory": memory, "dataset": "toy", "protocol": "qa"},
        "generator": {"backend": "extractive", "model": "extractive"},
        "dataset": {"name": "toy", "data_dir": "/data"},  # real data: tested (not fixtures)
    }
    (run / "config.yaml").write_text(json.dumps(config))
    (run / "summary.json").write_text(json.dumps({"metrics": {"f1": _entry(values)}}))
    tokens = {"memory": 10 * len(memory), "answer": 70}  # per run of 7 episodes
    usage = {
        "by_stage": {s: {"prompt_tokens": t, "completion_tokens": 0} for s, t in tokens.items()}
    }
    (run / "usage.json").write_text(json.dumps(usage))


def _plan(results: Path) -> None:
    methods = [("no_memory", "No memory"), ("good", "Good"), ("mixed", "Mixed"), ("gold", "Gold")]
    cells = {m: {"status": "finished", "job": f"toy_qa-{m}"} for m, _ in methods}
    cells["gold"] = {"status": "unavailable", "reason": GOLD_REASON}
    setting = {
        "key": "toy_qa",
        "label": "Toy QA",
        "selector": {"dataset": "toy", "protocol": "qa"},
        "place": {},
        "metrics": ["f1"],
        "episodes": 7,
        "episodes_asked": None,
    }
    other = {**setting, "key": "toy_resp", "label": "Toy response", "metrics": ["rouge_l"]}
    write_json(
        results / "runs" / "matrix" / "plan.json",
        {
            "tag": "matrix",
            "reference": "no_memory",
            "methods": [{"memory": m, "label": label} for m, label in methods],
            "settings": [setting, other],
            "cells": {"toy_qa": cells, "toy_resp": {m: {} for m, _ in methods}},
        },
    )


@pytest.fixture
def results(tmp_path) -> Path:
    for memory, values in F1.items():
        _run(tmp_path, memory, values)
    _plan(tmp_path)
    return tmp_path


def _render(results: Path, block: dict) -> tuple[dict, list[dict]]:
    base = {"id": block["id"], "title": "t", "runs": {"tag": "matrix"}}
    spec = parse_spec(block["id"], Path("x.yaml"), {**base, **block})
    files = reproduce(spec, TableContext(results_dir=results))
    with files["csv"].open() as fh:
        return files, list(csv.DictReader(fh))


def test_shape_reasons_and_paired_tests(results):
    block = {
        "id": "matrix_f1",
        "builder": "recallbench.tables.matrix.matrix_table",
        "metrics": {"f1": {"label": "F1", "scale": 100, "digits": 1}},
    }
    files, rows = _render(results, block)
    assert [r["row"] for r in rows] == ["No memory", "Good", "Mixed", "Gold"]
    assert {r["column"] for r in rows} == {"Toy QA"}  # Toy response reports no F1
    by = {r["row"]: r for r in rows}
    assert float(by["Good"]["ours"]) == 100.0 and float(by["Mixed"]["ours"]) == pytest.approx(
        300 / 7, abs=1e-4
    )
    assert by["Gold"]["ours"] == "n/a: needs gold memory"
    md = files["md"].read_text()
    assert f"n/a: {GOLD_REASON} -- Gold @ Toy QA" in md
    # exact sign flips over 7 episodes: Good's 7 differences of +1 are the most extreme of the
    # 2^7 assignments on both sides: p = 2/128; Mixed's 3 differences of +1 (4 zeros): the 3
    # signs all + or all -, times 2^4 for the zeros: p = 2 * 16/128. Mixed's floor counts only
    # its 3 episodes that differ, 2^(1-3) = 0.25 > alpha: it stays out of the Holm family, so
    # Good's family is itself alone (p_holm = p).
    assert float(by["Good"]["p_value"]) == pytest.approx(2 / 128)
    assert float(by["Mixed"]["p_value"]) == pytest.approx(0.25)
    assert float(by["Good"]["p_holm"]) == pytest.approx(2 / 128)
    assert by["Mixed"]["p_holm"] == ""
    assert by["Good"]["significant"] == "true" and by["Mixed"]["significant"] == ""
    assert by["No memory"]["p_value"] == "" and by["Gold"]["p_value"] == ""


def test_cost_table_and_pareto_figure(results):
    block = {
        "id": "matrix_cost",
        "builder": "recallbench.tables.matrix.matrix_cost",
        "quality": ["rouge_l", "f1"],
        "metrics": {
            "quality": {"label": "Quality", "scale": 100, "digits": 1},
            "write": {"label": "Write tokens"},
            "answer": {"label": "Answer tokens"},
        },
        "figure": {
            "kind": "pareto",
            "panels": "columns",
            "x_metric": "Write tokens",
            "y_metric": "Quality",
        },
    }
    files, rows = _render(results, block)
    got = {(r["row"], r["column"], r["metric"]): r["ours"] for r in rows}
    # memory tokens per run = 10 x len(memory name), over 7 episodes
    assert float(got["Good", "Toy QA", "Write tokens"]) == pytest.approx(40 / 7, abs=1e-6)
    assert float(got["No memory", "Toy QA", "Answer tokens"]) == pytest.approx(10, abs=1e-6)
    assert float(got["Good", "Toy QA", "Quality"]) == 100.0
    assert got["Gold", "Toy QA", "Quality"] == "n/a: needs gold memory"
    # Toy response reports rouge_l, Toy QA f1: each setting's first quality metric it reports
    assert {r["column"] for r in rows} == {"Toy QA", "Toy response"}
    assert files["png"].name == "matrix_cost.png" and files["png"].stat().st_size > 0


def test_plan_missing_and_short_reasons(tmp_path):
    with pytest.raises(DataNotFoundError, match="make matrix"):
        load_plan(tmp_path, "matrix")
    assert short_reason(GOLD_REASON) == "needs gold memory"
    assert short_reason("no data: msc/ not found") == "no data"
    assert short_reason("failed: ValueError: x") == "failed"


def test_cost_of_a_setting_that_reads_a_subset(results):
    # LoCoMo's matrix setting reads its categories 1-4 (place {"subset": "answerable"}): the
    # subset says where a cell reads, not which runs it takes; it used to select no run at all
    # ("n/a: not run" for every token count)
    plan_path = results / "runs" / "matrix" / "plan.json"
    plan = json.loads(plan_path.read_text())
    plan["settings"][0]["place"] = {"subset": "answerable"}
    plan_path.write_text(json.dumps(plan))
    for memory, values in F1.items():
        summary = (
            results / "runs" / "matrix" / "20260101-000000" / f"toy_qa-{memory}" / "summary.json"
        )
        entry = _entry(values)
        half = _entry([v / 2 for v in values])
        summary.write_text(
            json.dumps({"metrics": {"f1": {**entry, "subsets": {"answerable": half}}}})
        )
    block = {
        "id": "matrix_cost",
        "builder": "recallbench.tables.matrix.matrix_cost",
        "quality": ["f1"],
        "metrics": {
            "quality": {"label": "Quality", "scale": 100, "digits": 1},
            "write": {"label": "Write tokens"},
            "answer": {"label": "Answer tokens"},
        },
    }
    _, rows = _render(results, block)
    got = {(r["row"], r["column"], r["metric"]): r["ours"] for r in rows}
    assert float(got["Good", "Toy QA", "Quality"]) == 50.0  # the subset's value, not the pool's
    assert float(got["Good", "Toy QA", "Write tokens"]) == pytest.approx(40 / 7, abs=1e-6)
    assert float(got["Mixed", "Toy QA", "Answer tokens"]) == pytest.approx(10, abs=1e-6)
