"""Conversation Chronicles loader: flattened schema, phrases -> clock, errors, Hub offline."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest

from recallbench.clock import EPOCH
from recallbench.datasets import cc
from recallbench.errors import ConfigError, DatasetFormatError
from recallbench.records import Episode

TEST = "conversation_chronicles/test.jsonl"


@pytest.fixture(scope="module")
def episodes(fixtures_dir):
    return cc.load(fixtures_dir)


def _write(tmp_path, records):
    path = tmp_path / TEST
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture
def record(fixtures_dir):
    return json.loads((fixtures_dir / TEST).open().readline())


def test_fixture_episodes(episodes):
    assert [e.episode_id for e in episodes] == ["episode-90001", "episode-90002", "episode-90003"]
    e = episodes[0]
    assert e.dataset == "cc" and e.speakers == ("Neighbors A", "Neighbors B")
    assert e.meta["relationship"] == "Neighbors"
    assert e.meta["time_interval"][0] == "Start"
    assert [len(s.turns) for s in e.sessions] == [4, 3, 3, 4, 3]
    assert e.sessions[2].turns[0].speaker == "Neighbors B"
    assert e.sessions[4].gold == {
        "summary": ["Neighbors B saved tomato seeds to plant in Neighbors A's yard in spring."]
    }
    assert e.sessions[1].turns[0].turn_id == "episode-90001/s2/t0"


def test_time_interval_phrases(episodes):
    starts = [s.start for s in episodes[0].sessions]
    steps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    assert starts[0] == EPOCH
    assert steps == [timedelta(hours=3), timedelta(days=3), timedelta(weeks=3), timedelta(days=90)]
    classmates = episodes[1].sessions
    assert classmates[1].start - classmates[0].start == timedelta(days=730)  # "A couple of years"


def test_split_alias_limit_and_round_trip(fixtures_dir, episodes):
    assert cc.load(fixtures_dir, split="validation") == cc.load(fixtures_dir, split="valid")
    assert [e.episode_id for e in cc.load(fixtures_dir, split="valid")] == ["episode-80001"]
    assert cc.load(fixtures_dir, limit=2) == episodes[:2]
    for e in episodes:
        assert Episode.from_dict(e.to_dict()) == e
    with pytest.raises(ConfigError, match="split"):
        cc.load(fixtures_dir, split="dev")


def test_interval_count_must_match_sessions(tmp_path, record):
    record["time_interval"] = record["time_interval"][:4]
    _write(tmp_path, [record])
    with pytest.raises(DatasetFormatError, match=rf"{TEST} line 1: 'time_interval' has 4 entries"):
        cc.load(tmp_path)


def test_unknown_phrase(tmp_path, record):
    record["time_interval"][2] = "Once upon a time"
    _write(tmp_path, [record, record])
    with pytest.raises(DatasetFormatError, match=rf"{TEST} line 1: time_interval: cannot parse"):
        cc.load(tmp_path)


def test_parallel_lists_and_missing_session(tmp_path, record):
    bad = dict(record, third_session_speakers=record["third_session_speakers"][:-1])
    _write(tmp_path, [record, bad])
    with pytest.raises(DatasetFormatError, match=rf"{TEST} line 2: third session has 3 utterances"):
        cc.load(tmp_path)
    gap = {k: v for k, v in record.items() if not k.startswith("fourth")}
    _write(tmp_path, [gap])
    with pytest.raises(
        DatasetFormatError, match="'fifth' session present after a missing 'fourth'"
    ):
        cc.load(tmp_path)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="conversation_chronicles/test.jsonl"):
        cc.load(tmp_path)


def test_hub_offline_fails_fast(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    began = time.monotonic()
    with pytest.raises(ConnectionError, match="source='local'"):
        cc.load(tmp_path, source="hub", split="test")
    assert time.monotonic() - began < 30
