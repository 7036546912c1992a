"""Comparability with the paper's setting and coverage markers, on fake runs and the references."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from recallbench.analysis import find_runs
from recallbench.tables import load_reference
from recallbench.tables.cell import FEWER, FIXTURE, Cell, format_cell
from recallbench.tables.cells import summary_table
from recallbench.tables.comparability import Setting
from recallbench.tables.engine import TableContext
from recallbench.tables.render import render
from recallbench.tables.spec import parse_spec

SETTING = {
    "episodes": {"MSC": 50, "default": 100},
    "setting": {
        "generator": {"class": "llm", "model": "gpt-3.5-turbo-0125"},
        "metrics": {"mauve": {"is": ["mauve_gpt2_large"], "what": "MAUVE on GPT-2-large"}},
    },
}


def spec(**block):
    base = {
        "paper": "theanine",
        "id": "table1",
        "title": "t",
        "rows": [{"label": "Memory Retrieval", "memory": "memory_retrieval"}],
        "columns": [{"label": "MSC", "dataset": "msc"}, {"label": "CC", "dataset": "cc"}],
        "metrics": {"bleu4": {"scale": 100}, "mauve": {"scale": 100}},
    }
    return parse_spec("theanine_table1", Path("x.yaml"), {**base, **block}, own_tag="t")


def fake(tmp_path, make_run, backend: str, data_dir: str = "/data", n_clusters: int = 50):
    for dataset in ("msc", "cc"):
        make_run(
            tmp_path,
            "t",
            f"{dataset}-mr",
            {"memory": "memory_retrieval", "dataset": dataset},
            {
                "bleu4": {"value": 0.02, "n": 500, "n_clusters": n_clusters},
                "mauve": {
                    "value": 0.5,
                    "n": 500,
                    "n_clusters": n_clusters,
                    "meta": {"featurizer": "minilm"},
                },
            },
            config={
                "generator": {"backend": backend, "model": "m"},
                "dataset": {"name": dataset, "data_dir": data_dir},
            },
        )
    return find_runs(tmp_path, "t")


def test_extractive_generator_is_not_comparable_and_shows_no_diff(tmp_path, make_run):
    built = summary_table(
        spec(), TableContext(tmp_path, runs=tuple(fake(tmp_path, make_run, "extractive")))
    )
    by = {(c.column, c.metric): c for c in built.cells}
    bleu = by["MSC", "bleu4"]
    assert bleu.comparable is False and bleu.diff is None and bleu.paper == 1.92
    assert format_cell(bleu) == "2.00 (1.92)"  # the paper's value, no difference
    why = built.header["comparability"]
    assert "extractive:m (extractive) vs the paper's gpt-3.5-turbo-0125 (llm)" in why
    # the paper names no MAUVE features (issue 37): the line says so, not "GPT-2-large"
    assert "mauve on minilm vs the paper's MAUVE (Pillutla et al. 2021) on features" in why
    assert "the paper does not name" in why
    assert built.header["paper episodes"] == "50"
    path = render(built.cells, paper="p", table=1, title="t", header=built.header, out_dir=tmp_path)
    with path["csv"].open(encoding="utf-8") as fh:
        row = next(r for r in csv.DictReader(fh) if r["metric"] == "bleu4")
    assert (row["comparable"], row["diff"], row["paper"]) == ("false", "", "1.92")
    md = path["md"].read_text(encoding="utf-8")
    assert "no diff shown" in md and "without a difference = not comparable" in md


def test_llm_generator_is_comparable_except_for_the_metric_features(tmp_path, make_run):
    built = summary_table(
        spec(), TableContext(tmp_path, runs=tuple(fake(tmp_path, make_run, "openai")))
    )
    by = {(c.column, c.metric): c for c in built.cells}
    assert by["MSC", "bleu4"].comparable is True
    assert by["MSC", "bleu4"].diff == pytest.approx(2.0 - 1.92)
    assert by["MSC", "mauve"].comparable is False and by["MSC", "mauve"].diff is None
    assert "gpt-3.5" not in built.header["comparability"]


def test_fixture_and_fewer_episodes_markers(tmp_path, make_run):
    runs = fake(tmp_path, make_run, "openai", data_dir="data/fixtures", n_clusters=3)
    built = summary_table(spec(), TableContext(tmp_path, runs=tuple(runs)))
    cell = built.cells[0]
    assert (cell.coverage, cell.episodes) == (FIXTURE, 3)
    assert format_cell(cell).startswith(f"2.00 {FIXTURE}3 ")
    setting = Setting.of(SETTING)
    assert setting.paper_episodes("MSC") == 50 and setting.paper_episodes("Avg.") == 100
    real = find_runs(tmp_path, "t")[:1]
    real = [type(r)(**{**r.__dict__, "config": {"dataset": {"data_dir": "/d"}}}) for r in real]
    assert setting.coverage(real, "MSC", 49) == FEWER
    assert setting.coverage(real, "MSC", 50) == ""
    assert setting.coverage(real, "Avg.", 99) == FEWER
    text = format_cell(
        Cell("r", "c", "m", 1.0, 2.0, 10, 1, episodes=7, coverage=FEWER, comparable=True)
    )
    assert text == f"1.0 {FEWER}7 (2.0; -1.0)"
    # A fixture cell is never comparable with the paper (its data is not the paper's).
    assert cell.comparable is False and cell.diff is None
    assert "the project's fixtures" in built.header["comparability"]


def test_judge_class_and_undeclared_setting(tmp_path, make_run):
    setting = Setting.of({"setting": {"judge": {"class": "llm", "model": "GPT-4o"}}})
    make_run(tmp_path, "t", "a", {"memory": "naive_rag", "judge": "lexical"}, {})
    runs = find_runs(tmp_path, "t")
    assert setting.reasons(runs, "f1") == ["lexical judge (lexical) vs the paper's GPT-4o (llm)"]
    assert Setting.of({}).reasons(runs, "f1") == []
    assert "not assessed" in Setting.of({}).header([])["comparability"]
    with pytest.raises(ValueError, match="setting: unknown keys"):
        Setting.of({"setting": {"generatr": {"class": "llm"}}}, "x.yaml")


@pytest.mark.parametrize(
    ("paper", "table"),
    [
        ("theanine", "table1"),
        ("theanine", "table9"),
        ("lufy", "table11"),
        ("lufy", "table3"),
        ("carecall", "table4"),
        ("caim", "table3"),
    ],
)
def test_paper_tables_declare_their_setting_and_episodes(paper, table):
    setting = Setting.of(load_reference(paper)[table], f"{paper} {table}")
    assert setting.declared and setting.episodes is not None
    assert setting.classes["generator"]["class"] == "llm"
