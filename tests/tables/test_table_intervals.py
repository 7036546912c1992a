"""Every table cell built from a real (fixture) run lies inside its interval, pooled cells too.

Runs the response protocol on the MSC and CC fixtures and the LUFY QA protocol through
``cli.run`` (extractive generator, hashing embedder), then builds tables with the summary-cell
builder: corpus BLEU-4 (the value and the mean over sessions), Rouge-L per session, the MSC + CC
"Avg." that pools two runs (its interval recomputed by the stratified bootstrap), LUFY's P/R/F1
per session and retention; the csv carries the interval and the episode count.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from recallbench.analysis import find_runs
from recallbench.cli import compose_job, run
from recallbench.tables.cells import summary_table
from recallbench.tables.engine import TableContext
from recallbench.tables.render import render
from recallbench.tables.spec import parse_spec

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"
JOBS = {
    "msc-mr": ["dataset=msc", "memory=memory_retrieval", "metrics=lexical"],
    "cc-mr": ["dataset=cc", "memory=memory_retrieval", "metrics=lexical"],
    "lufy-rag": ["dataset=lufy", "memory=naive_rag", "protocol=qa_lufy", "+judge=lexical"],
}


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("results")
    for job, overrides in JOBS.items():
        cfg, choices = compose_job(
            [
                f"paths.results_dir={tmp}",
                f"dataset.data_dir={FIXTURES}",
                "embedder=hashing",
                "generator=extractive",
                "progress=false",
                "wandb.mode=disabled",
                "tag=t",
                *overrides,
            ]
        )
        run(cfg, job, choices)
    return tmp


def build(results: Path, **block):
    base = {"paper": "theanine", "id": "table1", "title": "t"}
    spec = parse_spec("theanine_table1", Path("x.yaml"), {**base, **block}, own_tag="t")
    return summary_table(spec, TableContext(results, runs=tuple(find_runs(results, "t"))))


def check(cells) -> int:
    checked = 0
    for cell in cells:
        if cell.ours is None:
            continue
        assert cell.ci_low is not None, f"{cell.row} {cell.column} {cell.metric}: no interval"
        assert cell.ci_low - 1e-9 <= cell.ours <= cell.ci_high + 1e-9, cell
        assert cell.episodes and cell.episodes >= 2
        checked += 1
    return checked


def test_response_cells_lie_inside_their_intervals(results, tmp_path):
    built = build(
        results,
        rows=[{"label": "Memory Retrieval", "memory": "memory_retrieval"}],
        columns=[
            {"label": "MSC", "dataset": "msc"},
            {"label": "MSC corpus", "dataset": "msc", "value": "value"},
            {"label": "CC", "dataset": "cc"},
            {"label": "Avg.", "dataset": ["msc", "cc"]},
            {"label": "S3", "dataset": ["msc", "cc"], "session": 3},
        ],
        metrics={"bleu4": {"scale": 100}, "rouge_l": {"scale": 100}},
        value="session_mean",
    )
    assert check(built.cells) == 10
    by = {(c.column, c.metric): c for c in built.cells}
    msc, cc, avg = by["MSC", "bleu4"], by["CC", "bleu4"], by["Avg.", "bleu4"]
    assert avg.episodes == msc.episodes + cc.episodes
    assert min(msc.ours, cc.ours) <= avg.ours <= max(msc.ours, cc.ours)
    path = render(built.cells, paper="p", table=1, title="t", header={}, out_dir=tmp_path)["csv"]
    with path.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert all(float(r["ci_low"]) <= float(r["ours"]) <= float(r["ci_high"]) for r in rows)
    assert {r["episodes"] for r in rows} >= {str(msc.episodes)}


def test_qa_cells_lie_inside_their_intervals(results):
    built = build(
        results,
        rows=[{"label": "Naive RAG", "memory": "naive_rag"}],
        columns=[
            {"label": "S1", "session": 1},
            {"label": "S2", "session": 2},
            {"label": "Avg.", "value": "session_mean"},
            {"label": "all", "value": "value"},
        ],
        metrics={"precision": {"scale": 100}, "recall": {"scale": 100}, "f1": {"scale": 100}},
    )
    assert check(built.cells) == 12
    retention = build(
        results,
        rows=[{"label": "Naive RAG", "memory": "naive_rag"}],
        columns=[{"label": "S1", "session": 1}, {"label": "S2", "session": 2}],
        metrics={"retained": {}, "retention_rate": {"scale": 100}},
    )
    assert check(retention.cells) == 4
