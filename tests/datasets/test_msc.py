"""MSC loader: ParlAI layout reconstruction, speakers, gold, time, flat sample, errors, real data."""

from __future__ import annotations

import json
import shutil
from datetime import timedelta

import pytest

from recallbench.clock import EPOCH, UNKNOWN_GAP
from recallbench.datasets import msc
from recallbench.errors import ConfigError, DatasetFormatError
from recallbench.records import Episode

DIALOGUE_3 = "msc/msc/msc_dialogue/session_3/test.txt"


@pytest.fixture(scope="module")
def episodes(fixtures_dir):
    return {e.episode_id: e for e in msc.load(fixtures_dir, split="test")}


@pytest.fixture
def tree(fixtures_dir, tmp_path):
    """A writable copy of the MSC fixture tree."""
    shutil.copytree(fixtures_dir / "msc", tmp_path / "msc")
    return tmp_path


def _rewrite(path, line_no, change):
    lines = path.read_text().splitlines()
    record = json.loads(lines[line_no - 1])
    change(record)
    lines[line_no - 1] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")


def test_highest_dialogue_file_plus_personasummary_extension(episodes):
    assert list(episodes) == ["test_0", "test_1", "test_2"]
    assert [len(e.sessions) for e in episodes.values()] == [4, 4, 2]
    e = episodes["test_0"]
    assert e.dataset == "msc" and e.speakers == ("Speaker 1", "Speaker 2")
    assert e.meta["source"]["dialogue"] == f"{DIALOGUE_3} line 1"
    assert e.meta["source"]["extension"] == ["msc/msc/msc_personasummary/session_4/test.txt line 1"]
    # test_2 exists only in session_2 files and has no personasummary session_3
    assert episodes["test_2"].meta["source"]["extension"] == []
    assert [s.session_id for s in e.sessions] == [f"test_0/s{i}" for i in (1, 2, 3, 4)]
    assert e.sessions[3].turns[0].text == "I practiced a new piece for the spring concert."


def test_speakers_by_parity_numeric_ids_and_bot_mapping(episodes):
    e = episodes["test_1"]
    s1 = e.sessions[0]  # previous_dialogs: no ids, 7 utterances (odd length)
    assert [t.speaker for t in s1.turns] == ["Speaker 1", "Speaker 2"] * 3 + ["Speaker 1"]
    assert e.sessions[1].turns[0].speaker == "Speaker 1"
    s3 = e.sessions[2]  # the dialogue file's own session: first id is a worker number
    assert s3.turns[0].speaker == "Speaker 1"
    assert s3.turns[0].labels["raw_speaker"] == "51234"
    assert s3.turns[3].labels["rating"] == "poor"
    s4 = e.sessions[3]  # appended from personasummary: bot_0 -> Speaker 1
    assert [t.speaker for t in s4.turns] == ["Speaker 1", "Speaker 2"] * 2


def test_time_gaps_leading_space_and_assumed_gap(episodes):
    e = episodes["test_0"]
    starts = [s.start for s in e.sessions]
    assert starts[0] == EPOCH
    assert starts[1] - starts[0] == timedelta(days=2)
    assert starts[2] - starts[1] == timedelta(hours=4)
    assert starts[3] - starts[2] == UNKNOWN_GAP
    assert e.meta["time"]["assumed_before"] == [4]
    assert e.meta["time"]["time_back"] == ["2 days 4 hours ago", "4 hours ago"]  # " 4 hours ago"
    assert episodes["test_1"].sessions[1].start - EPOCH == timedelta(hours=1)  # "hour", singular


def test_gold_persona_sources(episodes, fixtures_dir):
    e = episodes["test_0"]
    lines = (fixtures_dir / DIALOGUE_3).read_text().splitlines()
    record = json.loads(lines[0])
    # running summary after session 2 = top-level personas of the session_3 record
    assert e.sessions[1].gold["persona"] == {
        "Speaker 1": record["personas"][0],
        "Speaker 2": record["personas"][1],
    }
    s2_file = json.loads(
        (fixtures_dir / "msc/msc/msc_dialogue/session_2/test.txt").open().readline()
    )
    assert e.sessions[0].gold["persona"]["Speaker 2"] == s2_file["personas"][1]
    assert "persona" not in e.sessions[2].gold and "persona" not in e.sessions[3].gold
    assert e.sessions[2].gold["persona_session"]["Speaker 2"] == [
        "My restored map came back looking new."
    ]
    assert e.sessions[0].turns[1].labels["persona"] == "I work long shifts at a hospital."
    assert e.meta["init_personas"]["Speaker 1"] == [
        "I keep bees.",
        "I play the cello.",
        "I live by a lake.",
    ]
    # personasummary session 3 of test_1 writes "i" for "I": still aligned and annotated
    assert episodes["test_1"].sessions[2].turns[1].labels["persona"] == "My pumpkin soup sells out."


def test_persona_session_falls_back_to_previous_dialogs(tree):
    (tree / "msc/msc/msc_personasummary/session_1/test.txt").unlink()
    e = {x.episode_id: x for x in msc.load(tree)}["test_0"]
    assert e.sessions[0].gold["persona_session"] == {
        "Speaker 1": ["I keep bee hives.", "I sell honey at a market by the lake."],
        "Speaker 2": ["I work long shifts at a hospital.", "I have three cats."],
    }
    assert all("persona" not in t.labels for t in e.sessions[0].turns)


def test_split_extend_and_max_sessions(fixtures_dir):
    valid = msc.load(fixtures_dir, split="valid")
    assert [e.episode_id for e in valid] == ["valid_0"] and len(valid[0].sessions) == 4
    assert [len(e.sessions) for e in msc.load(fixtures_dir, extend=False)] == [3, 3, 2]
    short = msc.load(fixtures_dir, max_sessions=2)
    assert [len(e.sessions) for e in short] == [2, 2, 2]
    with pytest.raises(ConfigError, match="split"):
        msc.load(fixtures_dir, split="dev")
    with pytest.raises(ConfigError, match="max_sessions"):
        msc.load(fixtures_dir, max_sessions=0)


def test_flat_sample(fixtures_dir):
    (e,) = msc.load(fixtures_dir, format="flat")
    assert e.episode_id == "msc-episode-7" and e.speakers == ("Speaker A", "Speaker B")
    assert [len(s.turns) for s in e.sessions] == [6, 4, 6, 4, 5]
    assert e.meta["time"]["assumed_before"] == [2, 3, 4, 5]
    assert e.sessions[1].turns[1].speaker == "Speaker B"
    again = msc.load(fixtures_dir, path=msc.FLAT_SAMPLE)
    assert again == [e]


def test_flat_jsonl_path(fixtures_dir, tmp_path):
    records = json.loads((fixtures_dir / msc.FLAT_SAMPLE).read_text())
    second = {k: v for k, v in records[0].items() if not k.startswith(("fourth", "fifth"))}
    path = tmp_path / "flat.jsonl"
    path.write_text(json.dumps(records[0]) + "\n" + json.dumps(dict(second, dataID="x")) + "\n")
    first, short = msc.load(tmp_path, path=path)
    assert first.sessions == msc.load(fixtures_dir, format="flat")[0].sessions
    assert short.episode_id == "x" and len(short.sessions) == 3
    path.write_text(json.dumps(dict(second, third_session_dialogue=None)) + "\n")
    with pytest.raises(
        DatasetFormatError,
        match="flat.jsonl line 1: 'third_session_dialogue' should be a list, got null",
    ):
        msc.load(tmp_path, path="flat.jsonl")


def test_round_trip(episodes, fixtures_dir):
    for e in [*episodes.values(), *msc.load(fixtures_dir, format="flat")]:
        assert Episode.from_dict(e.to_dict()) == e


def test_missing_dialog_names_file_and_line(tree):
    _rewrite(tree / DIALOGUE_3, 2, lambda r: r.pop("dialog"))
    with pytest.raises(DatasetFormatError) as err:
        msc.load(tree)
    msg = str(err.value)
    assert msg.startswith(f"{DIALOGUE_3} line 2: 'dialog' missing (keys: [")
    assert "'personas'" in msg


def test_bad_time_unit_and_invalid_json(tree):
    def bad_unit(r):
        r["previous_dialogs"][1]["time_unit"] = "fortnights"

    _rewrite(tree / DIALOGUE_3, 1, bad_unit)
    with pytest.raises(DatasetFormatError, match=r"line 1 previous_dialogs\[1\]: bad time_num"):
        msc.load(tree)
    (tree / DIALOGUE_3).write_text('{"personas": [\n')
    with pytest.raises(DatasetFormatError, match=f"{DIALOGUE_3} line 1: invalid JSON"):
        msc.load(tree)


def test_personasummary_speaker_contradiction_is_an_error(tree):
    def swap(r):
        for t in r["dialog"]:
            t["id"] = "bot_1" if t["id"] == "bot_0" else "bot_0"

    _rewrite(tree / "msc/msc/msc_personasummary/session_3/test.txt", 1, swap)
    with pytest.raises(
        DatasetFormatError, match=r"session_3/test.txt line 1 dialog\[0\]: id 'bot_1'"
    ):
        msc.load(tree)


def test_missing_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="msc/msc/msc_dialogue/session_2/test.txt"):
        msc.load(tmp_path)
    with pytest.raises(FileNotFoundError, match="sample_dialogue.json"):
        msc.load(tmp_path, format="flat")


# ---------------------------------------------------------------- real data (skipped when absent)


@pytest.fixture(scope="module")
def real_test(real_data_dir):
    return msc.load(real_data_dir, split="test")


def _sessions_in(data_dir) -> int:
    """Sessions per valid/test episode of this copy: 5 with ParlAI's session_5 files, else 4."""
    return 5 if (data_dir / "msc/msc/msc_dialogue/session_5/test.txt").is_file() else 4


def test_session_5_dialogue_file_gives_five_sessions(tree, episodes):
    # ParlAI's msc_v0.1 has msc_dialogue/session_5/{valid,test}.txt: sessions 1-4 as
    # previous_dialogs, session 5 as dialog. Write one for test_0 from its 4 loaded sessions.
    e = episodes["test_0"]
    previous = [
        {
            "personas": [["I keep bee hives."], ["I work long shifts at a hospital."]],
            "dialog": [{"text": t.text} for t in s.turns],
            "time_num": 3,
            "time_unit": "days",
            "time_back": " 3 days ago",
        }
        for s in e.sessions
    ]
    record = {
        "personas": [["I keep bee hives.", "I play cello."], ["I collect old maps."]],
        "dialog": [
            {"text": "Did the market go well this weekend?", "id": "Speaker 1"},
            {"text": "Sold every jar of honey before noon.", "id": "Speaker 2"},
        ],
        "metadata": {"initial_data_id": "test_0", "session_id": 4},
        "previous_dialogs": previous,
        "init_personas": [["I keep bees."], ["I am a nurse."]],
    }
    folder = tree / "msc/msc/msc_dialogue/session_5"
    folder.mkdir(parents=True)
    (folder / "test.txt").write_text(json.dumps(record) + "\n")
    loaded = {x.episode_id: x for x in msc.load(tree, split="test")}
    five = loaded["test_0"]
    assert len(five.sessions) == 5 and five.meta["source"]["extension"] == []
    assert five.meta["source"]["dialogue"] == "msc/msc/msc_dialogue/session_5/test.txt line 1"
    assert [t.text for t in five.sessions[3].turns] == [t.text for t in e.sessions[3].turns]
    assert five.sessions[4].turns[1].text == "Sold every jar of honey before noon."
    assert five.sessions[4].start - five.sessions[3].start == timedelta(days=3)  # known gap
    assert five.sessions[3].gold["persona"]["Speaker 2"] == ["I collect old maps."]
    assert len(loaded["test_1"].sessions) == 4  # episodes without a session_5 record keep 4
    # THEANINE's target sessions 3-5 then include session 5.
    from recallbench.protocols.response import ResponseProtocol

    assert ResponseProtocol((3, 4, 5)).targets(five) == [3, 4, 5]
    assert ResponseProtocol((3, 4, 5)).targets(loaded["test_1"]) == [3, 4]


def test_real_test_split(real_test, real_data_dir):
    assert len(real_test) == 501
    assert all(len(e.sessions) == _sessions_in(real_data_dir) for e in real_test)
    assert len({e.episode_id for e in real_test}) == 501
    if _sessions_in(real_data_dir) == 5:
        return  # the full release: every gap and persona summary is in the dialogue files
    for e in real_test:
        assert set(e.sessions[0].gold) == {"persona", "persona_session"}
        assert set(e.sessions[3].gold) == {"persona_session"}
        assert e.sessions[3].start - e.sessions[2].start == UNKNOWN_GAP
        assert not any(tb.startswith(" ") for tb in e.meta["time"]["time_back"])
    # worker numbers instead of "Speaker 1" on the first turn of session 3 (a real quirk)
    raw = [t for e in real_test for t in e.sessions[2].turns if "raw_speaker" in t.labels]
    assert raw and all(t.speaker == "Speaker 1" and t.labels["raw_speaker"].isdigit() for t in raw)


def test_real_valid_split(real_data_dir):
    valid = msc.load(real_data_dir, split="valid")
    assert len(valid) == 500 and all(len(e.sessions) == _sessions_in(real_data_dir) for e in valid)


def test_real_flat_sample(real_data_dir):
    (e,) = msc.load(real_data_dir, format="flat")
    assert e.episode_id == "msc-episode-30"
    assert [len(s.turns) for s in e.sessions] == [14, 10, 12, 12, 12]
    assert Episode.from_dict(e.to_dict()) == e
