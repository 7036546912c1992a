"""TeaBag interchange format: inline and referenced episodes, write/read round trip, errors."""

from __future__ import annotations

import json
import shutil
from datetime import timedelta

import pytest

from recallbench.clock import UNKNOWN_GAP
from recallbench.datasets import cc, msc, teabag
from recallbench.datasets.teabag import TeaBagItem, inline_sessions, read_teabag, write_teabag
from recallbench.errors import DatasetFormatError
from recallbench.records import Episode

FILE = "teabag/teabag.jsonl"


@pytest.fixture(scope="module")
def episodes(fixtures_dir):
    return {e.episode_id: e for e in teabag.load(fixtures_dir)}


@pytest.fixture
def tree(fixtures_dir, tmp_path):
    for name in ("teabag", "msc", "conversation_chronicles"):
        shutil.copytree(fixtures_dir / name, tmp_path / name)
    return tmp_path


@pytest.fixture
def lines(fixtures_dir):
    return [json.loads(x) for x in (fixtures_dir / FILE).read_text().splitlines()]


def _write(tree, lines):
    (tree / FILE).write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_inline_episode_with_two_questions(episodes):
    e = episodes["episode-77001"]
    assert e.dataset == "teabag" and e.meta["source_dataset"] == "cc"
    assert e.speakers == ("Classmates A", "Classmates B")
    assert len(e.sessions) == 5 and e.sessions[3].gold == {
        "summary": ["Classmates B quit the robotics club."]
    }
    assert e.sessions[1].start - e.sessions[0].start == timedelta(weeks=3)
    q1, q2 = e.qa
    assert (q1.qa_id, q1.kind, q1.after_session) == ("cc-episode-77001-q1", "teafarm", 5)
    assert q1.answers == ("No, I quit the robotics club to focus on my exams.",)
    assert q1.meta["speaker"] == "Classmates A" and q1.meta["responder"] == "Classmates B"
    assert q1.meta["session6"][-1] == {"speaker": "Classmates A", "text": q1.question}
    assert q2.meta["responder"] == "Classmates A" and q2.meta["session6"] == []


def test_referenced_episodes_come_from_msc_and_cc(episodes, fixtures_dir):
    ref = episodes["test_0"]
    original = {e.episode_id: e for e in msc.load(fixtures_dir, split="test")}["test_0"]
    assert ref.sessions == original.sessions and ref.meta["source_dataset"] == "msc"
    assert ref.meta["init_personas"] == original.meta["init_personas"]
    assert ref.qa[0].after_session == 4 and ref.qa[0].meta["responder"] == "Speaker 1"
    from_cc = {e.episode_id: e for e in cc.load(fixtures_dir)}["episode-90002"]
    assert episodes["episode-90002"].sessions == from_cc.sessions


def test_round_trip(episodes):
    for e in episodes.values():
        assert Episode.from_dict(e.to_dict()) == e


def test_write_then_load_keeps_sessions_and_clock(fixtures_dir, tmp_path):
    source = msc.load(fixtures_dir, split="test")[1]  # test_1: hour/day gaps, assumed 4th gap
    item = TeaBagItem(
        qid="q-test_1",
        episode_id=source.episode_id,
        source_dataset="msc",
        speaker="Speaker 2",
        question="Is the diner still closed for winter?",
        answer="The diner is open; the pumpkin soup sells out.",
        session6=({"speaker": "Speaker 2", "text": "Is the diner still closed for winter?"},),
        sessions=inline_sessions(source),
    )
    as_dict = dict(item.to_dict(), qid="q-test_1-copy")
    assert write_teabag(tmp_path / FILE, [item, as_dict]) == 2
    assert read_teabag(tmp_path / FILE)[0] == item
    (loaded,) = teabag.load(tmp_path)
    assert [s.start for s in loaded.sessions] == [s.start for s in source.sessions]

    def plain(ep):  # labels (per-turn annotations) are not part of the inline format
        return [(t.turn_id, t.speaker, t.text) for t in ep.turns()]

    assert plain(loaded) == plain(source)
    assert [q.qa_id for q in loaded.qa] == ["q-test_1", "q-test_1-copy"]


def test_missing_time_interval_assumes_unknown_gap(tree, lines):
    for s in lines[0]["sessions"][2:]:
        s.pop("time_interval")
    _write(tree, lines[:1])
    (e,) = teabag.load(tree)
    assert e.sessions[4].start - e.sessions[3].start == UNKNOWN_GAP
    assert e.meta["time"]["assumed_before"] == [3, 4, 5]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda ls: ls[0].pop("answer"), r"teabag.jsonl line 1: 'answer' missing"),
        (lambda ls: ls[1].update(qid=ls[0]["qid"]), r"line 2: duplicate qid 'cc-episode-77001-q1'"),
        (
            lambda ls: ls[0].update(source_dataset="locomo"),
            r"line 1: source_dataset should be one of",
        ),
        (
            lambda ls: ls[2].update(speaker="Speaker 3"),
            r"qid 'msc-test_0-q1': speaker 'Speaker 3' is not",
        ),
        (lambda ls: ls[2].update(episode_id="test_99"), r"episode 'test_99' not found in msc"),
        (lambda ls: ls[0].update(source_options={"split": "test"}), r"line 1: give either inline"),
        (
            lambda ls: ls[1]["sessions"].pop(),
            r"qid 'cc-episode-77001-q2': episode 'episode-77001' is",
        ),
        (
            lambda ls: ls[0]["sessions"][1]["speakers"].pop(),
            r"line 1 sessions\[1\]: session has 2 utterances but 1 speakers",
        ),
        (
            lambda ls: [ls[i]["sessions"][1].update(time_interval="Much later") for i in (0, 1)],
            r"qid 'cc-episode-77001-q1': session 2 time_interval: cannot parse",
        ),
    ],
)
def test_bad_lines(tree, lines, change, message):
    change(lines)
    _write(tree, lines)
    with pytest.raises(DatasetFormatError, match=message):
        teabag.load(tree)


def test_write_rejects_invalid_items(tmp_path):
    with pytest.raises(DatasetFormatError, match="write_teabag item 0: 'question' missing"):
        write_teabag(
            tmp_path / "x.jsonl",
            [{"qid": "1", "episode_id": "e", "source_dataset": "cc", "speaker": "A"}],
        )
    assert not (tmp_path / "x.jsonl").exists()


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="teabag/teabag.jsonl"):
        teabag.load(tmp_path)
