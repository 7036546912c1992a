"""The two dataset-statistics tables (LUFY Table 1, CareCall Table 1): layout on hand-made
episodes, the table command on the fixtures, and the real data when present."""

from __future__ import annotations

import csv
import importlib.util

import pytest

from recallbench.cli import render_table
from recallbench.datasets import DataNotFoundError, load
from recallbench.datasets.stats import carecall_stats, conversation_stats
from recallbench.papers.carecall.dataset_table import table1_cells as carecall_table1_cells
from recallbench.papers.lufy.dataset_table import table1_cells as lufy_table1_cells
from recallbench.records import Episode, Session, Turn
from recallbench.tables import TableSpecError, load_spec, reference_table


def _episode(eid: str, sessions: list[list[str]], gold: list[dict] | None = None) -> Episode:
    gold = gold or [{} for _ in sessions]
    built = tuple(
        Session(
            f"{eid}/s{i}",
            i,
            None,
            tuple(Turn(f"{eid}/s{i}/t{j}", "AB"[j % 2], text) for j, text in enumerate(texts)),
            g,
        )
        for i, (texts, g) in enumerate(zip(sessions, gold, strict=True), start=1)
    )
    return Episode(eid, "toy", ("A", "B"), built)


ENGLISH = [
    _episode("e1", [["Hello there!", "I'm fine, thanks."], ["  ", "Good-bye now"]]),
    _episode("e2", [["one two three"]]),
]
KOREAN = [
    _episode(
        "interactive-1",
        [["안녕하세요 어르신", "네 안녕하세요"], ["손녀는 잘 지내요?", "네 잘 지내요"]],
        [
            {"memory": [], "summary": ["손녀가 태어남"]},
            {"memory": ["손녀가 태어남"], "summary": ["잘 지냄", " "]},
        ],
    )
]


def build_table(experiment, data_dir, results, *overrides):
    """Render a dataset table through the table command's composition."""
    where = [f"paths.data_dir={data_dir}", f"paths.results_dir={results}"]
    return render_table(experiment, [*where, *overrides])


def test_lufy_table1_layout_keeps_paper_rows():
    reference = reference_table("lufy", 1)
    loaded = {"lufy": conversation_stats(ENGLISH, "word", "lufy")}
    alt = {"lufy": conversation_stats(ENGLISH, "whitespace", "lufy")}
    loaded["gvd"] = conversation_stats(ENGLISH[:1], "word", "gvd")
    alt["gvd"] = conversation_stats(ENGLISH[:1], "whitespace", "gvd")
    cells = {(c.row, c.column): c for c in lufy_table1_cells(loaded, reference, alt)}
    lufy = cells[("LUFY-Dataset (Ours)", "Avg. Turns")]
    assert (lufy.ours, lufy.paper, lufy.n) == (2.5, 253.8, 2)
    assert cells[("LUFY-Dataset (Ours)", "Avg. Words (whitespace tokens)")].ours == 5.0
    soda = cells[("SODA (Kim et al., 2023)", "Avg. Words")]
    assert soda.ours is None and soda.paper == 122.4  # paper row kept, ours n/a
    gvd = cells[("GVD / MemoryBank (Zhong et al., 2023)", "Avg. Turns")]
    assert gvd.ours == 4.0 and gvd.paper is None  # e1 alone: 4 turns; extra row: no paper
    rows = list(dict.fromkeys(r for r, _ in cells))
    assert rows[0].startswith("Daily Dialog") and rows[-1].startswith("GVD")


def test_carecall_table1_layout():
    cells = carecall_table1_cells(carecall_stats(KOREAN), reference_table("carecall", 1))
    grid = {(c.row, c.column): c for c in cells}
    main = "CareCall_mem (all sessions)"
    assert (grid[("Sessions", main)].ours, grid[("Sessions", main)].paper) == (2, 7665)
    assert (grid[("Session 5", main)].ours, grid[("Session 5", main)].paper) == (0, 638)
    assert grid[("Distinct-2 for all turns", main)].paper == 0.2891
    assert grid[("Distinct-2 for all turns", "Session 2")].ours == pytest.approx(4 / 6)
    assert grid[("Distinct-2 for all turns", "Session 2")].paper is None


@pytest.mark.parametrize(
    ("experiment", "folder", "target"),
    [("lufy_table1", "lufy/", "lufy-1"), ("carecall_table1", "carecall_mem/", "carecall-1")],
)
def test_missing_dataset_says_how_to_fix(tmp_path, experiment, folder, target):
    with pytest.raises(DataNotFoundError) as info:
        build_table(experiment, tmp_path, tmp_path / "out")
    message = str(info.value)
    assert folder in message and "make data" in message and "DATA_DIR=" in message
    assert f"make reproduce-table-{target}" in message and "RECALLBENCH_DATA_DIR" in message
    assert not (tmp_path / "out").exists()


def test_unknown_table_and_tokenizer_suggest(tmp_path, fixtures_dir):
    with pytest.raises(KeyError, match="Did you mean 'lufy_table1'"):
        load_spec("lufy_tabel1")
    with pytest.raises(TableSpecError, match=r"table\.tokenizer: .*Did you mean .word."):
        build_table("lufy_table1", fixtures_dir, tmp_path, "table.tokenizer=wrd")


def test_carecall_table_options_from_the_command_line(tmp_path, fixtures_dir):
    paths = build_table("carecall_table1", fixtures_dir, tmp_path, "table.tokenizer=word")
    assert "tokenizer 'word'" in paths["md"].read_text(encoding="utf-8")
    with pytest.raises(FileNotFoundError, match="nope.json"):
        build_table("carecall_table1", fixtures_dir, tmp_path, "+table.options.file=nope.json")


def _csv_rows(path):
    with path.open(encoding="utf-8") as fh:
        return {(r["row"], r["column"]): r for r in csv.DictReader(fh)}


def test_lufy_table_on_fixtures(fixtures_dir, tmp_path):
    if not (fixtures_dir / "lufy").is_dir():
        pytest.skip("no LUFY fixture yet")
    paths = build_table("lufy_table1", fixtures_dir, tmp_path)
    expected = conversation_stats(load("lufy", fixtures_dir), "word")
    row = _csv_rows(paths["csv"])[("LUFY-Dataset (Ours)", "Avg. Turns")]
    assert float(row["ours"]) == pytest.approx(expected.avg_turns)
    assert row["paper"] == "253.8" and int(row["n"]) == expected.conversations
    assert "LUFY-Dataset (Ours)" in paths["md"].read_text(encoding="utf-8")


LUFY_LOADER = importlib.util.find_spec("recallbench.datasets.lufy") is not None


@pytest.mark.skipif(not LUFY_LOADER, reason="recallbench.datasets.lufy loader not written yet")
def test_real_lufy_matches_paper_table1(real_data_dir, tmp_path):
    if not (real_data_dir / "lufy").is_dir():
        pytest.skip(f"{real_data_dir} has no lufy/")
    paths = build_table("lufy_table1", real_data_dir, tmp_path)
    rows = _csv_rows(paths["csv"])
    turns = rows[("LUFY-Dataset (Ours)", "Avg. Turns")]
    assert int(turns["n"]) == 51  # 17 users x 3 systems
    assert abs(float(turns["ours"]) - 253.8) / 253.8 < 0.01  # 12,940 utterances / 51
    # measured: 'word' tokens 5,492.6 (-0.8%); whitespace 5,271.9 (-4.8%) vs the paper's 5,538.5
    words = rows[("LUFY-Dataset (Ours)", "Avg. Words")]
    assert abs(float(words["ours"]) - 5538.5) / 5538.5 < 0.02


CARECALL_LOADER = importlib.util.find_spec("recallbench.datasets.carecall") is not None


@pytest.mark.skipif(not CARECALL_LOADER, reason="recallbench.datasets.carecall not written yet")
def test_real_carecall_sample_table1(real_data_dir, tmp_path):
    if not (real_data_dir / "carecall_mem").is_dir():
        pytest.skip(f"{real_data_dir} has no carecall_mem/")
    rows = _csv_rows(build_table("carecall_table1", real_data_dir, tmp_path)["csv"])
    sessions = rows[("Sessions", "CareCall_mem (all sessions)")]
    assert (sessions["ours"], sessions["paper"]) == ("45", "7665")  # the public sample
