"""Persona-Chat loader: ParlAI numbering, persona lines, 2- and 4-field exchanges, errors, real data."""

from __future__ import annotations

import pytest

from recallbench.clock import EPOCH
from recallbench.datasets import persona_chat
from recallbench.errors import DatasetFormatError
from recallbench.records import Episode


def _write(tmp_path, text, name="bad.txt"):
    path = tmp_path / "persona_chat" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_numbering_restarts_split_dialogues(fixtures_dir):
    train = persona_chat.load(fixtures_dir, file="train_self_original_no_cands.txt")
    assert [e.episode_id for e in train] == [
        "train_self_original_no_cands/1",
        "train_self_original_no_cands/2",
    ]
    first, second = train
    assert first.meta["persona"] == {
        "self": [
            "i have a pet iguana named spike.",
            "i work at a bakery.",
            "i am learning to juggle.",
        ]
    }
    assert len(second.meta["persona"]["self"]) == 4
    assert (
        second.meta["source"] == "persona_chat/data/ConvAI2/train_self_original_no_cands.txt line 7"
    )
    (session,) = first.sessions
    assert session.index == 1 and session.start == EPOCH
    assert session.gold["persona"] == first.meta["persona"]
    assert [t.speaker for t in session.turns] == ["partner", "self"] * 3
    assert session.turns[1].text.startswith("hello ! just got home from the bakery")
    assert session.turns[1].turn_id == "train_self_original_no_cands/1/s1/t1"


def test_default_file_is_valid_split(fixtures_dir):
    valid = persona_chat.load(fixtures_dir)
    assert [len(e.sessions[0].turns) for e in valid] == [4, 6]


def test_with_candidates_and_partner_persona(fixtures_dir):
    (e,) = persona_chat.load(fixtures_dir, file="valid_both_original.txt")
    assert e.meta["persona"]["partner"] == ["i fix old bicycles.", "i have a big garden."]
    turns = e.sessions[0].turns
    assert [t.speaker for t in turns] == ["partner", "self", "partner", "self"]
    assert turns[1].labels["candidates"][-1] == turns[1].text
    assert len(turns[3].labels["candidates"]) == 3 and turns[0].labels == {}


def test_silence_partner_is_skipped(tmp_path):
    _write(
        tmp_path,
        "1 your persona: i like jazz.\n2 __SILENCE__\thi , i like jazz .\n3 me too !\tcool .\n",
    )
    (e,) = persona_chat.load(tmp_path, file="bad.txt")
    assert [(t.speaker, t.text) for t in e.sessions[0].turns] == [
        ("self", "hi , i like jazz ."),
        ("partner", "me too !"),
        ("self", "cool ."),
    ]


def test_round_trip(fixtures_dir):
    for name in ("train_self_original_no_cands.txt", "valid_both_original.txt"):
        for e in persona_chat.load(fixtures_dir, file=name):
            assert Episode.from_dict(e.to_dict()) == e


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1 your persona: a.\n2 hi\tho\n4 x\ty\n", r"bad.txt line 3: line number 4 should be 1"),
        ("2 hi\tho\n", r"bad.txt line 1: line number 2 should be 1"),
        ("1 hi\tho\tthird\n", r"bad.txt line 1: expected 2 tab-separated fields .* got 3"),
        ("1 hi\tho\n2 your persona: late.\n", r"bad.txt line 2: persona line after the dialogue"),
        ("1 hi\tho\n\nsome text\n", r"bad.txt line 3: expected '<n> <text>'"),
        ("1 hi\tho\t\ta|b\n", r"bad.txt line 1: the last candidate should be the self utterance"),
    ],
)
def test_bad_lines(tmp_path, text, message):
    _write(tmp_path, text)
    with pytest.raises(DatasetFormatError, match=message):
        persona_chat.load(tmp_path, file="bad.txt")


def test_missing_file_lists_available(fixtures_dir):
    with pytest.raises(FileNotFoundError, match="valid_self_original_no_cands.txt"):
        persona_chat.load(fixtures_dir, file="test_self_original.txt")


# ---------------------------------------------------------------- real data (skipped when absent)


@pytest.mark.parametrize(
    "name", ["train_self_original_no_cands.txt", "valid_self_original_no_cands.txt"]
)
def test_real_files(real_data_dir, name):
    episodes = persona_chat.load(real_data_dir, file=name)
    assert len(episodes) == 9
    for e in episodes:
        turns = e.sessions[0].turns
        assert 4 <= len(e.meta["persona"]["self"]) <= 5
        assert len(turns) % 2 == 0 and turns[0].speaker == "partner"
