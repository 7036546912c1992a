"""End to end on the LUFY fixture: cli.run for the Table 11 pairs -> run folders -> LUFY tables
through the table command (Tables 3, 12 and 15 read the Table 11 runs)."""

from __future__ import annotations

import csv
import json

import pytest

from recallbench.cli import compose_job, render_table, run

PAIRS = ("naive_rag", "memorybank", "lufy")


def _compose(pair: str, data_dir, results, tmp_path):
    overrides = [
        "experiment=lufy_table11",
        f"lufy_pair={pair}",
        f"paths.data_dir={data_dir}",
        f"paths.results_dir={results}",
        "embedder=hashing",
        "progress=false",
        "wandb.mode=disabled",
    ]
    if pair == "lufy":  # keep the test fast: no causal LM for the surprise metric
        overrides += ["memory.surprise=unigram", f"memory.arousal_cache_dir={tmp_path}/models"]
    return compose_job(overrides)


@pytest.fixture(scope="module")
def results(fixtures_dir, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lufy_e2e")
    out = tmp / "results"
    for pair in PAIRS:
        cfg, choices = _compose(pair, fixtures_dir, out, tmp)
        assert (
            cfg.job
            == {
                "naive_rag": "lufy-naive_rag-on-Naive_RAG",
                "memorybank": "lufy-memorybank-on-MemoryBank",
                "lufy": "lufy-lufy-on-LUFY",
            }[pair]
        )
        run_dir = run(cfg, cfg.job, choices)
        assert json.loads((run_dir / "run.json").read_text())["status"] == "finished"
    return out


def _render(experiment, results):
    return render_table(experiment, [f"paths.results_dir={results}"])


def _cells(path):
    with path.open(encoding="utf-8") as fh:
        return {(r["row"], r["column"]): r for r in csv.DictReader(fh)}


def test_table11_from_cli_runs(results):
    paths = _render("lufy_table11", results)
    md = paths["md"].read_text(encoding="utf-8")
    assert md.startswith("# LUFY Table 11") and "lexical" in md and "hashing" in md
    cells = _cells(paths["csv"])
    for system in ("Naive RAG", "MemoryBank", "LUFY"):
        for column in ("Precision S1", "Recall Avg.", "F1 S2"):
            value = cells[system, column]["ours"]
            assert value != "n/a" and 0 <= float(value) <= 100, (system, column)
    assert cells["LUFY", "Precision S1"]["paper"] == "80.0"
    # LUFY's fixture user Zoe has 4 sessions x 3 questions: 3 + 6 + 9 + 12 asked, plus Omar's
    assert cells["LUFY", "Recall S4"]["n"] == "12"
    assert cells["MemoryBank", "Recall S3"]["ours"] == "n/a"  # the fixture has 2 sessions


def test_tables_3_12_15_share_the_runs(results):
    retention = _cells(_render("lufy_table3", results)["csv"])
    assert float(retention["Naive RAG", "Rate (%) S1"]["ours"]) == 100.0
    assert float(retention["LUFY", "Rate (%) S2"]["ours"]) < 100.0
    agreement = _cells(_render("lufy_table12", results)["csv"])
    for row in ("LUFY", "(Random)", "(Annotators)"):
        assert 0 <= float(agreement[row, "S2"]["ours"]) <= 100, row
    paths = _render("lufy_table15", results)
    # its rows (Top k) map to the runs whose stores are ranked, and no pair of them is tested
    assert "no test between rows" in paths["md"].read_text(encoding="utf-8")
    topk = _cells(paths["csv"])
    assert topk["Top 10", "Ratio (%)"]["ours"] != "n/a"
    ratios = [float(topk[f"Top {k}", "Ratio (%)"]["ours"]) for k in range(1, 11)]
    assert ratios == sorted(ratios)
