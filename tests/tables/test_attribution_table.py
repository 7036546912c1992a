"""The failure-attribution table (``tables.attribution``) rendered on fixture runs made by the
cli: LUFY Table 11's setting, one method, with and without the oracle context."""

from __future__ import annotations

import csv
import json

import pytest

from recallbench.analysis import runs_in
from recallbench.cli import compose_job, render_table, run
from recallbench.tables.attribution import MEASURES

CLASS_COLUMNS = [MEASURES[m][0] for m in ("evidence_unknown", "not_in_memory")] + [
    MEASURES[m][0] for m in ("not_retrieved", "reader_error")
]


@pytest.fixture(scope="module")
def results(fixtures_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("attribution") / "results"
    dirs = {}
    for experiment in ("lufy_table11", "attribution_lufy_oracle"):
        cfg, choices = compose_job(
            [
                f"experiment={experiment}",
                "lufy_pair=naive_rag",
                f"paths.data_dir={fixtures_dir}",
                f"paths.results_dir={out}",
                "embedder=hashing",
                "progress=false",
                "wandb.mode=disabled",
            ]
        )
        dirs[experiment] = run(cfg, cfg.job, choices)
    return out, dirs


def _cells(path):
    with path.open(encoding="utf-8") as fh:
        return {(r["row"], r["metric"]): r for r in csv.DictReader(fh)}


def test_table_renders_the_breakdown_and_the_reader_ceiling(results):
    out, dirs = results
    paths = render_table("attribution_lufy", [f"paths.results_dir={out}"])
    cells = _cells(paths["csv"])
    row = "Naive RAG"
    shares = [float(cells[row, c]["ours"]) for c in CLASS_COLUMNS]
    assert sum(shares) == pytest.approx(100.0)  # every failure has exactly one class
    assert cells[row, MEASURES["judge_disagreement"][0]]["ours"] == "n/a"  # one judge
    # accuracy = correct / asked = the run's own pooled LUFY recall; the oracle's likewise
    summary = json.loads((dirs["lufy_table11"] / "summary.json").read_text())
    recall = summary["metrics"]["recall"]
    assert float(cells[row, "accuracy %"]["ours"]) == pytest.approx(100 * recall["value"])
    assert int(cells[row, "accuracy %"]["n"]) == recall["n"]
    asked = recall["n"]
    failures = int(cells[row, "failures"]["ours"])
    labels = summary["judge"]["labels"]
    assert failures == asked - labels["1"]
    oracle = json.loads((dirs["attribution_lufy_oracle"] / "summary.json").read_text())
    if float(cells[row, MEASURES["evidence_unknown"][0]]["ours"]) == 0:  # every item located
        got = float(cells[row, MEASURES["oracle_accuracy"][0]]["ours"])
        assert got == pytest.approx(100 * oracle["metrics"]["recall"]["value"])
    # the methods without runs are n/a, never 0
    assert cells["LUFY", "accuracy %"]["ours"] == "n/a"
    # one line per failure in the items file, each with its class
    with paths["items_csv"].open(encoding="utf-8") as fh:
        items = [r for r in csv.DictReader(fh) if r["row"] == row]
    assert len(items) == failures
    assert {r["class"] for r in items} <= {
        "evidence_unknown",
        "not_in_memory",
        "not_retrieved",
        "reader_error",
    }
    md = paths["md"].read_text(encoding="utf-8")
    assert "one judge: judge disagreement n/a" in md and "1 oracle run(s)" in md
    # the runs read the project's fixtures: every value of the row says so (§k), never bare
    assert {cells[row, c]["coverage"] for c in CLASS_COLUMNS} == {"§"}
    naive = next(line for line in md.splitlines() if line.startswith("| Naive RAG |"))
    assert naive.count("§") >= len(CLASS_COLUMNS) and "project's fixtures" in md


def test_the_oracle_run_shows_only_evidence(results):
    _, dirs = results
    (oracle_run,) = runs_in(dirs["attribution_lufy_oracle"])
    preds = [
        json.loads(line)
        for line in (oracle_run.path / "predictions.jsonl").read_text().splitlines()
    ]
    answers = [p for p in preds if p["kind"] == "answer"]
    assert answers and all("oracle" in p["meta"] for p in answers)
    for p in answers:  # what was recalled is exactly the evidence turns
        assert p["recalled"] == p["meta"]["oracle"]["turn_ids"]
