"""Tests of the LUFY loader on self-written xlsx fixtures and, when present, the real files."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import openpyxl
import pytest
from omegaconf import OmegaConf

from recallbench import clock
from recallbench.datasets import load
from recallbench.datasets.lufy import BOT
from recallbench.errors import ConfigError, DatasetFormatError
from recallbench.records import Episode

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def episodes(fixtures_dir: Path) -> dict[str, Episode]:
    return {e.episode_id: e for e in load("lufy", fixtures_dir)}


def _session(episode: Episode, n: int):
    return next(s for s in episode.sessions if s.index == n)


def _mismatches(episode: Episode, **match) -> list[dict]:
    return [m for m in episode.meta["mismatches"] if all(m.get(k) == v for k, v in match.items())]


def test_fixture_counts_and_ids(episodes: dict[str, Episode]) -> None:
    assert list(episodes) == [
        "lufy/LUFY/Omar",
        "lufy/LUFY/Zoe",
        "lufy/MemoryBank/Zoe",
        "lufy/Naive RAG/Zoe",
    ]
    zoe = episodes["lufy/LUFY/Zoe"]
    assert zoe.dataset == "lufy" and zoe.speakers == (BOT, "Zoe")
    assert [s.session_id for s in zoe.sessions] == [f"lufy/LUFY/Zoe/s{n}" for n in (1, 2, 3, 4)]
    assert [len(s.turns) for s in zoe.sessions] == [6, 6, 8, 6]
    assert [s.start for s in zoe.sessions] == clock.regular(4, clock.LUFY_GAP)
    first = zoe.sessions[0].turns
    assert [t.turn_id for t in first[:2]] == ["lufy/LUFY/Zoe/s1/t0", "lufy/LUFY/Zoe/s1/t1"]
    assert [t.speaker for t in first] == [BOT, "Zoe"] * 3
    assert first[1].text == "Hello Luke, I am Zoe, 29, I teach chemistry in Sendai."
    assert zoe.meta | {"mismatches": [], "annotator_comments": [], "empty_turns": []} == {
        "system": "LUFY",
        "user": "Zoe",
        "annotators": ["0", "1", "2"],
        "canonical_annotator": "0",
        "mismatches": [],
        "annotator_comments": [],
        "empty_turns": [],
    }
    assert sum(len(e.sessions) for e in episodes.values()) == 10
    assert sum(1 for e in episodes.values() for t in e.turns() if t.speaker != BOT) == 26


def test_importance_labels_per_annotator(episodes: dict[str, Episode]) -> None:
    turns = _session(episodes["lufy/LUFY/Zoe"], 1).turns
    assert [t.labels for t in turns if t.speaker != BOT] == [
        {"importance": {"0": 1, "1": 0, "2": 0}},
        {"importance": {"0": 0, "1": 1, "2": 0}},
        {"importance": {"0": 1, "1": 1, "2": 1}},
    ]
    assert all(t.labels == {} for t in turns if t.speaker == BOT)


def test_qa_items_follow_their_session(episodes: dict[str, Episode]) -> None:
    zoe = episodes["lufy/LUFY/Zoe"]
    assert len(zoe.qa) == 12
    assert [q.after_session for q in zoe.qa] == [1] * 3 + [2] * 3 + [3] * 3 + [4] * 3
    q = zoe.qa[3]
    assert (q.qa_id, q.question, q.answers) == (
        "lufy/LUFY/Zoe/s2/q1",
        "What is the name of Zoe's cat?",
        ("Pixel.",),
    )


def test_header_variants_and_extra_columns(episodes: dict[str, Episode]) -> None:
    # 'Unnamed: 0' label header (Naive RAG/Zoe/Session2/Annotator1) and extra empty columns
    # with a lone space (MemoryBank/Zoe/Session2/Annotator2): read by position, labels aligned.
    naive = _session(episodes["lufy/Naive RAG/Zoe"], 2).turns
    assert naive[1].labels == {"importance": {"0": 0, "1": 1, "2": 0}}
    bank = _session(episodes["lufy/MemoryBank/Zoe"], 2).turns
    assert [t.text for t in bank] == [
        "Hello again! Did you go to the ramen stall?",
        "Yes, and they had a new yuzu broth.",
        "How was it?",
        "Too sour for me, I went back to miso.",
    ]
    assert bank[1].labels["importance"] == {"0": 1, "1": 1, "2": 0}
    assert not _mismatches(episodes["lufy/Naive RAG/Zoe"], kind="turn_count")


def test_filled_down_labels_and_missing_separator(episodes: dict[str, Episode]) -> None:
    omar = _session(episodes["lufy/LUFY/Omar"], 1).turns  # Annotator1 filled label 0 everywhere
    assert [t.speaker for t in omar] == [BOT, "Omar", BOT, "Omar"]
    assert [t.labels for t in omar] == [
        {},
        {"importance": {"0": 1, "1": 1, "2": 0}},
        {},
        {"importance": {"0": 0, "1": 1, "2": 1}},
    ]
    zoe3 = _session(episodes["lufy/LUFY/Zoe"], 3).turns  # Annotator0 lacks a separator row
    assert len(zoe3) == 8 and zoe3[4].speaker == BOT and zoe3[4].labels == {}
    assert zoe3[5].labels["importance"] == {"0": 0, "1": 1, "2": 1}


def test_empty_bot_turn_is_kept(episodes: dict[str, Episode]) -> None:
    zoe = episodes["lufy/LUFY/Zoe"]
    turn = _session(zoe, 4).turns[2]
    assert (turn.turn_id, turn.speaker, turn.text) == ("lufy/LUFY/Zoe/s4/t2", BOT, "")
    assert zoe.meta["empty_turns"] == ["lufy/LUFY/Zoe/s4/t2"]


def test_annotator_comments_never_become_qa(episodes: dict[str, Episode]) -> None:
    zoe = episodes["lufy/LUFY/Zoe"]
    assert zoe.meta["annotator_comments"] == [
        {
            "session": 2,
            "annotator": "1",
            "cell": "D11",
            "text": "(Luke mixed up the cat and the sister once)",
        }
    ]
    naive = episodes["lufy/Naive RAG/Zoe"]
    assert naive.meta["annotator_comments"] == [
        {"session": 1, "annotator": "2", "cell": "E4", "text": "(is it the season or the month?)"}
    ]
    assert naive.qa[1].question == "Why does Zoe like autumn?"
    assert all("(" not in q.question + q.answers[0] for e in episodes.values() for q in e.qa)


def test_copies_that_differ_are_recorded_not_fatal(episodes: dict[str, Episode]) -> None:
    zoe = episodes["lufy/LUFY/Zoe"]  # Annotator1 calls the bot Naomi in the QA of session 3
    assert _mismatches(zoe) == [
        {"session": 3, "annotator": "1", "kind": "qa_text", "items": ["Q2", "Q3"]}
    ]
    assert zoe.qa[7].question == "What did Zoe ask Luke to name?"
    bank = episodes["lufy/MemoryBank/Zoe"]
    assert _mismatches(bank) == [
        {
            "session": 1,
            "annotator": "1",
            "kind": "turn_text",
            "turns": ["lufy/MemoryBank/Zoe/s1/t1"],
        },
        {"session": 1, "annotator": "2", "kind": "turn_count", "expected": 6, "found": 4},
    ]
    turns = _session(bank, 1).turns
    assert turns[1].text == "Mostly ramen, the miso kind."  # canonical copy's text
    # Annotator1 (edited text, same shape) keeps its labels; Annotator2 (short copy) is dropped.
    assert [t.labels["importance"] for t in turns if t.speaker != BOT] == [
        {"0": 1, "1": 0},
        {"0": 0, "1": 1},
        {"0": 0, "1": 0},
    ]
    # Padding-only differences (LUFY/Omar/Session2/Annotator2) are not mismatches.
    assert _mismatches(episodes["lufy/LUFY/Omar"]) == []


def test_canonical_annotator_option(fixtures_dir: Path) -> None:
    (zoe,) = load("lufy", fixtures_dir, system="LUFY", users="Zoe", canonical_annotator=1)
    assert zoe.qa[7].question == "What did Zoe ask Naomi to name?"
    assert zoe.meta["canonical_annotator"] == "1"
    assert {m["annotator"] for m in zoe.meta["mismatches"]} == {"0", "2"}


def test_system_and_users_options(fixtures_dir: Path) -> None:
    assert [e.episode_id for e in load("lufy", fixtures_dir, system="Naive RAG")] == [
        "lufy/Naive RAG/Zoe"
    ]
    both = load("lufy", fixtures_dir, system=["MemoryBank", "LUFY"], users=["Zoe"])
    assert [e.episode_id for e in both] == ["lufy/LUFY/Zoe", "lufy/MemoryBank/Zoe"]
    with pytest.raises(ConfigError, match="Did you mean 'Naive RAG'"):
        load("lufy", fixtures_dir, system="Naive Rag")
    with pytest.raises(ConfigError, match="unknown user of LUFY system 'LUFY' 'Zoey'"):
        load("lufy", fixtures_dir, system="LUFY", users="Zoey")


def test_round_trip(episodes: dict[str, Episode]) -> None:
    for episode in episodes.values():
        assert Episode.from_dict(episode.to_dict()) == episode


def test_fixtures_match_their_generator(tmp_path: Path, fixtures_dir: Path) -> None:
    script = ROOT / "scripts" / "make_fixtures_lufy.py"
    subprocess.run([sys.executable, str(script), "--out", str(tmp_path)], check=True)
    made = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.xlsx"))
    committed = fixtures_dir / "lufy"
    assert made == sorted(p.relative_to(committed) for p in committed.rglob("*.xlsx"))
    for rel in made:
        assert (tmp_path / rel).read_bytes() == (committed / rel).read_bytes(), rel


# ----- bad input -------------------------------------------------------------------------


@pytest.fixture
def omar_tree(tmp_path: Path, fixtures_dir: Path) -> Path:
    """A data root holding only LUFY/Omar, copied from the fixtures so tests can break it."""
    src = fixtures_dir / "lufy" / "Dataset" / "LUFY" / "Omar"
    shutil.copytree(src, tmp_path / "lufy" / "Dataset" / "LUFY" / "Omar")
    return tmp_path


def _edit(path: Path, edit) -> None:
    wb = openpyxl.load_workbook(path)
    edit(wb)
    wb.save(path)


def _load_omar(root: Path) -> list[Episode]:
    return load("lufy", root, system="LUFY", users="Omar")


OMAR_S1 = "lufy/Dataset/LUFY/Omar/Session1"


def test_missing_sheet(omar_tree: Path) -> None:
    path = omar_tree / OMAR_S1 / "Annotator2.xlsx"
    _edit(path, lambda wb: wb.remove(wb["Questions"]))
    with pytest.raises(
        DatasetFormatError, match=r"Omar/Session1/Annotator2.xlsx: sheet 'Questions' missing"
    ):
        _load_omar(omar_tree)


def test_bad_conversation_header(omar_tree: Path) -> None:
    path = omar_tree / OMAR_S1 / "Annotator0.xlsx"
    _edit(path, lambda wb: wb["Conversation"].cell(1, 2, "who"))
    with pytest.raises(
        DatasetFormatError, match=r"Annotator0.xlsx sheet 'Conversation' row 1: expected header"
    ):
        _load_omar(omar_tree)


def test_broken_qa_order(omar_tree: Path) -> None:
    def swap(wb):
        ws = wb["Questions"]
        ws.cell(3, 1, "Q2")
        ws.cell(4, 1, "A1")

    _edit(omar_tree / OMAR_S1 / "Annotator1.xlsx", swap)
    with pytest.raises(
        DatasetFormatError, match=r"'Questions' row 3: expected 'A1' in column A, got 'Q2'"
    ):
        _load_omar(omar_tree)


def test_missing_qa_rows(omar_tree: Path) -> None:
    _edit(omar_tree / OMAR_S1 / "Annotator1.xlsx", lambda wb: wb["Questions"].delete_rows(6, 2))
    with pytest.raises(
        DatasetFormatError, match="expected rows Q1, A1, Q2, A2, Q3, A3 after the header, found 4"
    ):
        _load_omar(omar_tree)


@pytest.mark.parametrize(
    ("cell", "value", "message"),
    [
        ((3, 1), 2, r"row 3: importance label \(column A\) must be 0 or 1, got 2"),
        ((3, 2), "Omr", r"row 3: speaker 'Omr', expected 'Luke' or 'Omar'"),
        ((4, 3), "orphan text", r"row 4: utterance without speaker"),
    ],
)
def test_bad_conversation_rows(omar_tree: Path, cell, value, message: str) -> None:
    _edit(omar_tree / OMAR_S1 / "Annotator0.xlsx", lambda wb: wb["Conversation"].cell(*cell, value))
    with pytest.raises(DatasetFormatError, match=message):
        _load_omar(omar_tree)


def test_missing_canonical_file_and_session_gap(omar_tree: Path) -> None:
    (omar_tree / OMAR_S1 / "Annotator0.xlsx").unlink()
    with pytest.raises(DatasetFormatError, match=r"Session1: canonical Annotator0.xlsx missing"):
        _load_omar(omar_tree)
    shutil.rmtree(omar_tree / OMAR_S1)
    with pytest.raises(
        DatasetFormatError, match=r"expected folders Session1..SessionN without gaps"
    ):
        _load_omar(omar_tree)


def test_missing_annotator_file_is_recorded(omar_tree: Path) -> None:
    (omar_tree / OMAR_S1 / "Annotator2.xlsx").unlink()
    (omar,) = _load_omar(omar_tree)
    assert omar.meta["mismatches"] == [{"session": 1, "annotator": "2", "kind": "missing_file"}]
    assert omar.sessions[0].turns[1].labels == {"importance": {"0": 1, "1": 1}}


def test_not_a_workbook(omar_tree: Path) -> None:
    (omar_tree / OMAR_S1 / "Annotator1.xlsx").write_bytes(b"not a zip")
    with pytest.raises(DatasetFormatError, match="Annotator1.xlsx: not a readable xlsx workbook"):
        _load_omar(omar_tree)


# ----- real data -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_lufy(real_data_dir: Path) -> list[Episode]:
    return load("lufy", real_data_dir)


def test_real_counts(real_lufy: list[Episode]) -> None:
    assert len(real_lufy) == 51
    assert Counter(e.meta["system"] for e in real_lufy) == {
        "LUFY": 17,
        "MemoryBank": 17,
        "Naive RAG": 17,
    }
    assert sum(len(e.sessions) for e in real_lufy) == 204
    assert sum(len(e.qa) for e in real_lufy) == 612
    turns = [t for e in real_lufy for t in e.turns()]
    assert sum(t.speaker != BOT for t in turns) == 6470
    assert sum(t.speaker == BOT for t in turns) == 6470
    labels = Counter(v for t in turns for v in t.labels.get("importance", {}).values())
    assert labels == {0: 17574, 1: 1836}  # SOURCE.md: every annotator label aligned


def test_real_quirks(real_lufy: list[Episode]) -> None:
    by_id = {e.episode_id: e for e in real_lufy}
    assert all(len(e.sessions) == 4 and e.meta["annotators"] == ["0", "1", "2"] for e in real_lufy)
    kinds = Counter(m["kind"] for e in real_lufy for m in e.meta["mismatches"])
    assert kinds == {"qa_text": 5}  # the "Naomi" QA copies; conversations align everywhere
    assert sum(len(e.meta["empty_turns"]) for e in real_lufy) == 7
    assert len(by_id["lufy/LUFY/Logan"].meta["empty_turns"]) == 4
    comments = [c for e in real_lufy for c in e.meta["annotator_comments"]]
    assert len(comments) == 10
    files = {
        (e.episode_id, c["session"], c["annotator"])
        for e in real_lufy
        for c in e.meta["annotator_comments"]
    }
    assert len(files) == 9  # SOURCE.md: 9 Questions sheets carry comments or extra columns
    james = by_id["lufy/Naive RAG/James"]  # 'Unnamed: 0' header in Session3/Annotator1
    assert all(len(t.labels["importance"]) == 3 for t in james.turns() if t.speaker != BOT)


def test_real_system_option(real_data_dir: Path) -> None:
    episodes = load("lufy", real_data_dir, system="Naive RAG")
    assert len(episodes) == 17
    assert {e.episode_id.split("/")[1] for e in episodes} == {"Naive RAG"}


def test_config_defaults_load(fixtures_dir: Path) -> None:
    cfg = OmegaConf.load(ROOT / "conf" / "dataset" / "lufy.yaml")
    assert cfg.name == "lufy" and OmegaConf.to_container(cfg)["data_dir"] == "${paths.data_dir}"
    options = OmegaConf.to_container(cfg.options)
    assert options == {"system": None, "users": None, "canonical_annotator": 0}
    assert len(load(cfg.name, fixtures_dir, **options)) == 4
