"""The generic table renderer and the papers' reference values."""

from __future__ import annotations

import csv
from functools import partial

import pytest

from recallbench.tables.render import (
    Cell,
    format_cell,
    load_reference,
    paper_values,
    reference_table,
    reference_value,
    render,
    table_id,
)

Assessed = partial(Cell, comparable=True)  # a cell assessed as comparable with the paper's
CELLS = [
    Assessed("Naive RAG", "S1", "f1", 0.5, 0.4, 17, 3),
    Assessed("Naive RAG", "S2", "f1", None, 0.45, None, 3),
    Assessed("LUFY_x & co", "S1", "f1", 0.61234, None, 17, 3),
    Assessed("LUFY_x & co", "S2", "f1", 0.7, 0.75, 17, 3),
    Assessed("Counts", "S1", "turns", 12940, 12944, 51),
    Assessed("Counts", "S2", "setting", "Human-Chatbot", "Human-Chatbot", 51),
]
HEADER = {"Generator": "extractive", "Judge": "lexical", "Embedder": "hashing", "Episodes": 51}


@pytest.mark.parametrize(
    ("cell", "text"),
    [
        (Assessed("r", "c", "m", 0.5, 0.4, 1, 3), "0.500 (0.400; +0.100)"),
        (Assessed("r", "c", "m", 0.35, 0.4, 1, 2), "0.35 (0.40; -0.05)"),
        (Assessed("r", "c", "m", None, 0.45, None, 2), "n/a (0.45)"),
        (Assessed("r", "c", "m", 0.61234, None, 1, 3), "0.612 (—)"),
        (Assessed("r", "c", "m", None, None), "n/a"),
        (Assessed("r", "c", "m", 12940, 12944), "12,940 (12,944; -4)"),
        (Assessed("r", "c", "m", 5492.647, 5538.5, 51, 1), "5,492.6 (5,538.5; -45.9)"),
        (Assessed("r", "c", "m", "Human-Human", "Human-Human"), "Human-Human"),
        (
            Assessed("r", "c", "m", "Human-Human", "Chatbot-Chatbot"),
            "Human-Human (Chatbot-Chatbot)",
        ),
    ],
)
def test_format_cell(cell, text):
    assert format_cell(cell) == text


def test_diff():
    assert Assessed("r", "c", "m", 0.5, 0.4).diff == pytest.approx(0.1)
    assert Assessed("r", "c", "m", 3, 5).diff == -2 and isinstance(
        Assessed("r", "c", "m", 3, 5).diff, int
    )
    assert Assessed("r", "c", "m", None, 0.4).diff is None
    assert Assessed("r", "c", "m", "a", "b").diff is None


def test_render_writes_md_tex_csv(tmp_path):
    paths = render(
        CELLS,
        paper="lufy",
        table=11,
        title="LUFY Table 11: QA",
        header=HEADER,
        out_dir=tmp_path / "tables",
        notes=["judge is lexical, not GPT-4o"],
        corner="System",
    )
    assert {k: p.name for k, p in paths.items()} == {
        "md": "lufy_table11.md",
        "tex": "lufy_table11.tex",
        "csv": "lufy_table11.csv",
    }
    assert sorted(p.name for p in (tmp_path / "tables").iterdir()) == sorted(
        p.name for p in paths.values()
    )  # no temp files left behind

    md = paths["md"].read_text(encoding="utf-8").splitlines()
    assert md[0] == "# LUFY Table 11: QA"
    assert "- **Generator**: extractive" in md and "- **Episodes**: 51" in md
    assert "| System | S1 | S2 | n |" in md
    assert "| Naive RAG | 0.500 (0.400; +0.100) | n/a (0.450) | 17 |" in md
    assert "| LUFY_x & co | 0.612 (—) | 0.700 (0.750; -0.050) | 17 |" in md
    assert "| Counts | 12,940 (12,944; -4) | Human-Chatbot | 51 |" in md
    assert "- judge is lexical, not GPT-4o" in md

    tex = paths["tex"].read_text(encoding="utf-8")
    assert r"LUFY\_x \& co & 0.612 (---) & 0.700 (0.750; -0.050) & 17 \\" in tex
    assert (
        r"System & S1 & S2 & n \\" in tex
        and r"\begin{tabular}{lrrr}" in tex
        and r"\label{tab:lufy-table11}" in tex
    )
    assert "% Judge: lexical" in tex

    with paths["csv"].open(encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][:7] == ["row", "column", "metric", "ours", "paper", "diff", "n"]
    assert rows[0][7:] == [
        "episodes",
        "ci_low",
        "ci_high",
        "p_value",
        "p_holm",
        "significant",
        "comparable",
        "coverage",
        "seed_sd",
        "seeds",
    ]
    empty = ["", "", "", "", "", "", "true", "", "", ""]  # no interval, test, marker, seeds
    assert rows[1] == ["Naive RAG", "S1", "f1", "0.5", "0.4", "0.1", "17", *empty]
    assert rows[2] == ["Naive RAG", "S2", "f1", "n/a", "0.45", "n/a", "n/a", *empty]
    assert rows[3] == ["LUFY_x & co", "S1", "f1", "0.61234", "n/a", "n/a", "17", *empty]
    assert rows[5] == ["Counts", "S1", "turns", "12940", "12944", "-4", "51", *empty]
    assert len(rows) == len(CELLS) + 1


def test_render_overwrites_and_optionally_hides_n(tmp_path):
    render(CELLS, paper="p", table=1, title="t", header={}, out_dir=tmp_path)
    paths = render(
        CELLS[:2], paper="p", table=1, title="t2", header={}, out_dir=tmp_path, show_n=False
    )
    md = paths["md"].read_text(encoding="utf-8")
    assert md.startswith("# t2\n\n|  | S1 | S2 |\n") and "Counts" not in md


def test_render_rejects_duplicates_and_empty(tmp_path):
    with pytest.raises(ValueError, match="two cells for row 'a', column 'b', metric 'm'"):
        render(
            [Assessed("a", "b", "m", 1, 1), Assessed("a", "b", "m", 2, 2)],
            paper="p",
            table=1,
            title="t",
            header={},
            out_dir=tmp_path,
        )
    with pytest.raises(ValueError, match="no cells"):
        render([], paper="p", table=1, title="t", header={}, out_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_several_metrics_per_column_split_into_display_columns(tmp_path):
    cells = [
        Assessed("Memory Retrieval", "MSC", "bleu4", 1.5, 1.92, 50),
        Assessed("Memory Retrieval", "MSC", "rouge_l", 14.0, 15.49, 50),
        Assessed("Memory Retrieval", "CC", "bleu4", None, 4.93, 0),
        Assessed("Memory Retrieval", "CC", "rouge_l", None, 20.63, 0),
    ]
    paths = render(cells, paper="theanine", table="table1", title="t", header={}, out_dir=tmp_path)
    assert paths["md"].name == "theanine_table1.md"  # "table1" and 1 name the same file
    md = paths["md"].read_text(encoding="utf-8")
    assert "|  | MSC / bleu4 | MSC / rouge_l | CC / bleu4 | CC / rouge_l | n |" in md
    assert "| Memory Retrieval | 1.50 (1.92; -0.42) | 14.00 (15.49; -1.49) | n/a (4.93) |" in md
    # the n column: 50 (CC's cells have no value, so their n = 0 does not count); csv keeps both
    assert (
        "| Memory Retrieval | 1.50 (1.92; -0.42) | 14.00 (15.49; -1.49) | n/a (4.93) | n/a (20.63) | 50 |"
        in md
    )
    mixed = [Assessed("r", "a", "m", 1.0, None, 3), Assessed("r", "b", "m", 2.0, None, 4)]
    md = render(mixed, paper="p", table=2, title="t", header={}, out_dir=tmp_path)["md"]
    assert "| r | 1.00 (—) | 2.00 (—) | varies (csv) |" in md.read_text(encoding="utf-8")


def test_md_escapes_pipes(tmp_path):
    cells = [Assessed("Avg. memory |M|", "value", "m", 1.0, 2.0)]
    md = render(cells, paper="p", table=1, title="t", header={}, out_dir=tmp_path)["md"]
    assert r"| Avg. memory \|M\| | 1.00 (2.00; -1.00) | n/a |" in md.read_text(encoding="utf-8")


def test_lufy_reference_has_table1():
    table1 = load_reference("lufy")["table1"]
    assert table1["values"]["lufy"]["avg_turns"] == 253.8
    assert table1["values"]["lufy"]["avg_words"] == 5538.5
    assert table1["values"]["msc"] == {
        "avg_turns": 53.3,
        "avg_words": 1225.9,
        "setting": "Human-Human",
    }
    assert "Table 1" in table1["source"] and "LUFY" in table1["source"]


def test_carecall_reference_has_table1():
    table1 = reference_table("carecall", 1)
    values = table1["values"]
    assert values["all"]["sessions"] == sum(values[f"session_{k}"]["sessions"] for k in range(1, 6))
    assert values["all"]["distinct2"] == 0.2891 and values["all"]["turns"] == 160191
    assert "Table 1" in table1["source"]


VALUES = {
    "LUFY": {"S1": {"f1": 0.58, "bleu": 0}, "Avg.": {"f1": None}},
    "all": {"sessions": 7502, "setting": "Human-Chatbot"},
}


def test_reference_value_reads_row_column_metric_and_none_where_absent():
    assert reference_value(VALUES, "LUFY", "S1", "f1") == 0.58
    assert reference_value(VALUES, "LUFY", "S1", "bleu") == 0  # a reported 0 is not absent
    assert reference_value(VALUES, "all", "sessions") == 7502  # a table of rows x metrics
    assert reference_value(VALUES, "all", "setting") == "Human-Chatbot"
    absent = [("Naive RAG", "S1", "f1"), ("LUFY", "S9", "f1"), ("LUFY", "S1", "rouge")]
    assert [reference_value(VALUES, *where) for where in absent] == [None, None, None]
    assert reference_value(VALUES, "LUFY", "Avg.", "f1") is None  # reported as empty
    assert reference_value(VALUES, "all", "turns") is None
    assert reference_value({}, "LUFY", "S1", "f1") is None


def test_reference_value_rejects_a_number_where_a_mapping_should_be():
    with pytest.raises(ValueError, match=r"at 'sessions': expected a mapping, got 'Human-Chatbot'"):
        reference_value(VALUES, "all", "setting", "sessions")
    with pytest.raises(ValueError, match=r"LUFY/S1: expected a number, got \{'f1'"):
        reference_value(VALUES, "LUFY", "S1")


def test_paper_values_of_a_table_and_of_none():
    assert reference_value(paper_values("lufy", "table1"), "msc", "avg_turns") == 53.3
    assert reference_value(paper_values("lufy", "table10"), "LUFY", "S2", "sentiment") == 0.43
    assert paper_values("lufy", "table999") == {}


@pytest.mark.parametrize(
    ("given", "ident"),
    [(3, "table3"), ("3", "table3"), ("table11_cross", "table11_cross"), ("figure5", "figure5")],
)
def test_table_id_has_one_format(given, ident, tmp_path):
    assert table_id(given) == ident
    cells = [Assessed("r", "c", "m", 1.0, None)]
    paths = render(cells, paper="p", table=given, title="t", header={}, out_dir=tmp_path)
    assert paths["csv"].name == f"p_{ident}.csv"
    assert rf"\label{{tab:p-{ident}}}" in paths["tex"].read_text(encoding="utf-8")


@pytest.mark.parametrize("bad", ["Table3", "fig5", "table", "3a", "table 3"])
def test_table_id_rejects_other_formats(bad):
    with pytest.raises(ValueError, match="expected table<n> or figure<n>"):
        table_id(bad)


def test_unknown_reference_suggests():
    with pytest.raises(KeyError, match="Did you mean 'lufy'"):
        load_reference("lufi")
    with pytest.raises(KeyError, match="table99"):
        reference_table("lufy", 99)


def test_a_cell_not_assessed_or_not_comparable_prints_no_difference(tmp_path):
    # The default is "not assessed" (comparable None): the paper's value, never a difference.
    for cell in (Cell("r", "c", "m", 0.5, 0.4, 1, 3), Assessed("r", "c", "m", 0.5, 0.4, 1, 3)):
        cell = (
            cell
            if cell.comparable is None
            else Cell("r", "c", "m", 0.5, 0.4, 1, 3, comparable=False)
        )
        assert cell.diff is None and format_cell(cell) == "0.500 (0.400)"
    cells = [Cell("r", "a", "m", 0.5, 0.4, 1), Cell("r", "b", "m", 0.5, 0.4, 1, comparable=False)]
    path = render(cells, paper="p", table=1, title="t", header={}, out_dir=tmp_path)["csv"]
    with path.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["diff"], r["comparable"]) for r in rows] == [("", ""), ("", "false")]
