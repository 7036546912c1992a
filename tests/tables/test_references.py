"""Every reference table declares the paper's setting and episodes; no table prints a difference
it has not assessed as comparable, and no fixture cell carries a significance marker."""

from __future__ import annotations

import csv
from collections.abc import Mapping
from pathlib import Path

import pytest

from recallbench import CONF_DIR
from recallbench.analysis import find_runs
from recallbench.tables import load_reference
from recallbench.tables.cell import FEWER, FIXTURE, Cell
from recallbench.tables.comparability import FIXTURE_REASON, Setting
from recallbench.tables.engine import assess
from recallbench.tables.render import OWN_LEGEND, PAPERS_DIR
from recallbench.tables.spec import load_spec

PAPERS = sorted(p.parent.name for p in PAPERS_DIR.glob("*/reference.yaml"))
ENTRIES = [(paper, key) for paper in PAPERS for key in load_reference(paper)]
EXPERIMENTS = sorted(
    p.stem for p in (Path(CONF_DIR) / "experiment").glob("*.yaml") if "table:" in p.read_text()
)
RESULTS = Path(__file__).resolve().parents[2] / "results" / "tables"
PAPERS = RESULTS.parents[1] / "src" / "recallbench" / "papers"


@pytest.mark.parametrize(("paper", "key"), ENTRIES, ids=[f"{p}-{k}" for p, k in ENTRIES])
def test_every_reference_table_declares_its_setting_and_episodes(paper, key):
    entry = load_reference(paper)[key]
    where = f"papers/{paper}/reference.yaml: {key}"
    assert isinstance(entry.get("setting"), Mapping) and entry["setting"], f"{where}: no setting"
    assert "episodes" in entry, f"{where}: no episodes (null + episodes_note when not given)"
    setting = Setting.of(entry, where)  # validates the keys, classes, metrics, data, episodes
    assert setting.declared
    episodes = entry["episodes"]
    unknown = episodes is None or (
        isinstance(episodes, Mapping) and any(v is None for v in episodes.values())
    )
    if unknown:
        assert entry.get("episodes_note"), f"{where}: episodes not given without episodes_note"


PAPER_TABLES = [e for e in EXPERIMENTS if load_spec(e).paper is not None]  # not own/cross tables


@pytest.mark.parametrize("experiment", PAPER_TABLES)
def test_every_table_has_a_reference_entry_whose_metrics_it_names(experiment):
    spec = load_spec(experiment)
    if spec.paper is None:  # our own tables (the cross-paper matrix) have no paper to match
        assert experiment.startswith("matrix"), f"{experiment}: a table without a paper"
        return
    entry = load_reference(spec.paper).get(spec.id)
    assert entry is not None, f"papers/{spec.paper}/reference.yaml has no {spec.id}"
    named = set(spec.metrics or {}) | {m.label for m in (spec.metrics or {}).values()}
    named |= {spec.option("metric", None)} | {str(r.metric) for r in spec.rows}
    declared = set(entry["setting"].get("metrics") or {})
    if spec.metrics or spec.option("metric", None):
        assert declared <= named, f"{experiment}: setting.metrics names {declared - named}"


def test_settings_reject_malformed_entries():
    with pytest.raises(ValueError, match="episodes: expected a positive integer"):
        Setting.of({"setting": {}, "episodes": "many"}, "x")
    with pytest.raises(ValueError, match=r"setting.metrics.ppl: expected \{is"):
        Setting.of({"setting": {"metrics": {"ppl": {"is": "gpt2"}}}}, "x")
    with pytest.raises(ValueError, match="setting.data: expected"):
        Setting.of({"setting": {"data": {"whole": True}}}, "x")


def test_not_assessed_never_prints_a_difference(tmp_path, make_run):
    # A builder that says nothing about comparability, under an undeclared setting: no cell is
    # comparable (None) and none prints a difference, even one a builder marked comparable.
    cells = [
        Cell("r", "c", "m", 0.5, 0.4, 10),
        Cell("r", "d", "m", 0.5, 0.4, 10, comparable=True),
    ]
    got, _ = assess(cells, Setting.of({}), [], fixture=False)
    assert [(c.comparable, c.diff) for c in got] == [(None, None), (None, None)]


def test_custom_builder_cells_are_assessed_from_the_table_runs(tmp_path, make_run):
    setting = Setting.of(
        {
            "setting": {
                "generator": {"class": "llm", "model": "GPT-4o"},
                "metrics": {"sentiment": {"is": [], "what": "RoBERTa classifiers"}},
            },
            "episodes": 17,
        }
    )
    make_run(tmp_path, "t", "a", {"memory": "lufy"}, {}, config={"dataset": {"data_dir": "/d"}})
    runs = find_runs(tmp_path, "t")  # an extractive run
    cells = [
        Cell("LUFY", "S1", "agreement", 12.0, 19.4, 30, episodes=17),
        Cell("(Annotators)", "S1", "agreement", 19.6, 18.3, 30, episodes=17, comparable=True),
        Cell("LUFY", "S2", "sentiment", 0.5, 0.43, 30, episodes=9),
    ]
    got, reasons = assess(cells, setting, runs, fixture=False)
    assert [c.comparable for c in got] == [False, True, False]  # a builder's True stands
    assert got[1].diff == pytest.approx(1.3) and got[0].diff is None
    assert "extractive:extractive (extractive) vs the paper's GPT-4o (llm)" in reasons
    assert "sentiment vs the paper's RoBERTa classifiers" in reasons
    assert [c.coverage for c in got] == ["", "", FEWER]  # 9 < 17 episodes
    on_fixtures, reasons = assess(cells, setting, runs, fixture=True)
    assert [c.comparable for c in on_fixtures] == [False, False, False]
    assert FIXTURE_REASON in reasons and {c.coverage for c in on_fixtures} == {FIXTURE}


def test_whole_dataset_statistics_need_the_whole_dataset():
    entry = {
        "episodes": {"LUFY-Dataset (Ours)": 51, "default": None},
        "episodes_note": "other rows: other papers' corpora",
        "setting": {"data": {"what": "each full corpus", "whole": True}},
    }
    setting = Setting.of(entry)
    cells = [
        Cell("LUFY-Dataset (Ours)", "Avg. Turns", "avg_turns", 253.7, 253.8, 51, 1, episodes=51),
        Cell("MSC (Xu et al., 2022)", "Avg. Turns", "avg_turns", 48.7, 53.3, 501, 1, episodes=501),
        Cell("LUFY-Dataset (Ours)", "Avg. Words", "avg_words", 5.0, 5.5, 40, 1, episodes=40),
    ]
    got, reasons = assess(cells, setting, [], fixture=False)
    assert [c.comparable for c in got] == [True, False, False]
    assert got[0].diff == pytest.approx(-0.1)
    assert any("the paper gives no episode count here" in r for r in reasons)
    assert "40 episodes vs the paper's whole dataset, each full corpus" in reasons
    assert setting.header(reasons)["paper episodes"].startswith("LUFY-Dataset (Ours): 51")


@pytest.mark.skipif(not RESULTS.is_dir(), reason="no committed results/tables")
@pytest.mark.parametrize(
    "path",
    sorted(p for p in RESULTS.glob("*.csv") if p.with_suffix(".md").exists()),  # not *_items.csv
    ids=lambda p: p.stem,
)
def test_committed_tables_print_only_assessed_differences(path):
    with path.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    md = path.with_suffix(".md").read_text(encoding="utf-8")
    # a paper's table, not our own (an own table may still be named after a paper's data, as
    # locomo_referee is: its legend says it has no paper column)
    paper = path.stem.split("_")[0] in {d.name for d in PAPERS.iterdir()} and OWN_LEGEND not in md
    if paper and any(r["ours"] not in ("", "n/a") for r in rows):
        assert "- **comparability**: " in md, f"{path.name}: no comparability line"
    if "- **comparability**: not assessed" in md:
        assert all(r["diff"] in ("", "n/a") for r in rows), f"{path.name}: not assessed, diffs"
    for row in rows:
        where = f"{path.name}: {row['row']} / {row['column']} / {row['metric']}"
        if row["diff"] not in ("", "n/a"):
            assert row["comparable"] == "true", f"{where}: a difference not assessed comparable"
        if row["coverage"] == FIXTURE:
            assert row["significant"] == "" and row["p_holm"] == "", f"{where}: fixture tested"
            assert row["comparable"] != "true", f"{where}: a fixture cell comparable"
