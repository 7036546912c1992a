"""LaMP-1 loader: question -> one-session episode with profile turns and one QAItem; errors."""

from __future__ import annotations

import json
import shutil

import pytest

from recallbench.datasets import lamp1
from recallbench.errors import ConfigError, DatasetFormatError
from recallbench.records import Episode

USER = "lamp1/user/LaMP_1"


@pytest.fixture
def tree(fixtures_dir, tmp_path):
    shutil.copytree(fixtures_dir / "lamp1", tmp_path / "lamp1")
    return tmp_path


def _edit(path, change):
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_dev_questions_become_episodes(fixtures_dir):
    episodes = lamp1.load(fixtures_dir)
    assert [e.episode_id for e in episodes] == ["1000", "1001"]
    e = episodes[0]
    assert e.dataset == "lamp1" and e.speakers == ("profile",)
    (session,) = e.sessions
    assert [t.turn_id for t in session.turns] == ["1000/s1/10001", "1000/s1/10002", "1000/s1/10003"]
    first = session.turns[0]
    assert first.speaker == "profile"
    assert first.text == (
        "Streaming anomaly detection on edge devices\n"
        "We detect anomalies in sensor data with a tiny model."
    )
    assert first.labels == {"item_id": "10001", "date": "2015"}
    assert session.turns[1].text == "Low-power inference for wearables"  # empty abstract
    (qa,) = e.qa
    assert qa.qa_id == "1000" and qa.kind == "lamp1" and qa.after_session == 1
    assert qa.answers == ("[1]",) and episodes[1].qa[0].answers == ("[2]",)
    assert qa.question.startswith('For an author who has written the paper with the title "Sparse')
    assert qa.meta == {
        "title": "Sparse attention for long sensor streams",
        "options": {
            "[1]": "Efficient transformers for time series",
            "[2]": "A survey of medieval pottery",
        },
    }
    assert e.meta == {"setting": "user", "split": "dev", "source": e.meta["source"], "gold": True}


def test_test_split_time_setting_and_options(fixtures_dir):
    (t,) = lamp1.load(fixtures_dir, split="test")
    assert t.qa[0].answers == () and t.meta["gold"] is False
    (time_based,) = lamp1.load(fixtures_dir, setting="time")
    assert time_based.episode_id == "3000" and time_based.meta["setting"] == "time"
    titles = lamp1.load(fixtures_dir, abstracts=False)[0].sessions[0].turns
    assert titles[0].text == "Streaming anomaly detection on edge devices"
    assert len(lamp1.load(fixtures_dir, limit=1)) == 1
    with pytest.raises(ConfigError, match="setting"):
        lamp1.load(fixtures_dir, setting="item")


def test_round_trip(fixtures_dir):
    for e in lamp1.load(fixtures_dir) + lamp1.load(fixtures_dir, split="test"):
        assert Episode.from_dict(e.to_dict()) == e


def test_bad_output_label(tree):
    _edit(tree / USER / "dev_outputs.json", lambda d: d["golds"][1].update(output="[3]"))
    with pytest.raises(
        DatasetFormatError, match=rf"{USER}/dev_outputs.json golds\[1\]: output should be"
    ):
        lamp1.load(tree)


def test_gold_and_question_ids_must_match(tree):
    _edit(tree / USER / "dev_outputs.json", lambda d: d["golds"].pop(0))
    with pytest.raises(
        DatasetFormatError, match=rf"{USER}/dev_questions.json record 0 \(id 1000\): no gold"
    ):
        lamp1.load(tree)
    _edit(
        tree / USER / "dev_outputs.json",
        lambda d: d["golds"].extend(
            [{"id": "1000", "output": "[1]"}, {"id": "9", "output": "[2]"}]
        ),
    )
    with pytest.raises(DatasetFormatError, match=r"golds for ids not in .*\['9'\]"):
        lamp1.load(tree)


def test_wrong_task_and_missing_profile(tree):
    _edit(tree / USER / "dev_outputs.json", lambda d: d.update(task="LaMP_2"))
    with pytest.raises(DatasetFormatError, match="'task' should be 'LaMP_1', got 'LaMP_2'"):
        lamp1.load(tree)
    _edit(tree / USER / "test_questions.json", lambda d: d[0].pop("profile"))
    with pytest.raises(
        DatasetFormatError, match=r"test_questions.json record 0 \(id 2000\): 'profile' missing"
    ):
        lamp1.load(tree, split="test")


def test_missing_outputs_file(tree):
    (tree / USER / "dev_outputs.json").unlink()
    with pytest.raises(FileNotFoundError, match="dev_outputs.json"):
        lamp1.load(tree)
