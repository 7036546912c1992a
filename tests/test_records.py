"""Records: frozen, stable ids, lossless JSONL round trip."""

from __future__ import annotations

import dataclasses
from datetime import datetime

import pytest

from recallbench.records import (
    Episode,
    MemoryItem,
    Prediction,
    QAItem,
    Query,
    Recall,
    Score,
    Session,
    Turn,
    decayed_recallable,
    in_memory,
    read_jsonl,
    write_jsonl,
)


def _episode() -> Episode:
    t1 = Turn("e1/s1/t0", "Luke", "Hi! How was your day?")
    t2 = Turn("e1/s1/t1", "Mia", "Great, I climbed Mt. Fuji 🗻", {"importance": {"0": 1, "1": 0}})
    s1 = Session("e1/s1", 1, datetime(2023, 1, 2, 9), (t1, t2), {"summary": ["Mia climbed Fuji."]})
    s2 = Session("e1/s2", 2, None, (Turn("e1/s2/t0", "Luke", "Welcome back"),))
    qa = QAItem("e1/q0", "What did Mia climb?", ("Mt. Fuji",), 1, ("e1/s1/t1",), "probe")
    return Episode("e1", "lufy", ("Luke", "Mia"), (s1, s2), (qa,), {"system": "LUFY"})


def test_episode_round_trip_is_lossless():
    ep = _episode()
    back = Episode.from_dict(ep.to_dict())
    assert back == ep
    assert back.sessions[0].start == datetime(2023, 1, 2, 9)
    assert back.sessions[1].start is None
    assert back.sessions[0].turns[1].labels == {"importance": {"0": 1, "1": 0}}
    assert [t.turn_id for t in back.turns()] == ["e1/s1/t0", "e1/s1/t1", "e1/s2/t0"]


@pytest.mark.parametrize(
    "record",
    [
        MemoryItem("m1", "Mia likes tea", "fact", datetime(2023, 1, 3), ("e1/s1/t1",), {"s": 1.5}),
        Query("e1", 2, (Turn("t", "A", "x"),), "Mia", datetime(2023, 1, 3), "What?"),
        Recall((MemoryItem("m1", "x", "summary", None),), "x", {"k": 6}),
        Prediction("p1", "e1", 2, "response", "abc", "out", "ref", ("t1",), {"cached": True}),
        Score("p1", "bleu4", 0.25, {"variant": "corpus"}),
    ],
)
def test_every_record_round_trips(record, tmp_path):
    cls = type(record)
    assert cls.from_dict(record.to_dict()) == record
    path = tmp_path / "r.jsonl"
    write_jsonl(path, [record, record])
    assert read_jsonl(path, cls) == [record, record]


def test_records_are_frozen():
    ep = _episode()
    with pytest.raises(dataclasses.FrozenInstanceError):
        ep.episode_id = "other"  # type: ignore[misc]


def test_json_refuses_nan():
    with pytest.raises(ValueError):
        Score("p", "m", float("nan")).to_json()


def test_recall_source_ids_are_ordered_and_unique():
    items = (
        MemoryItem("a", "x", "fact", None, ("t2", "t1")),
        MemoryItem("b", "y", "fact", None, ("t1", "t3")),
    )
    assert Recall(items).source_ids() == ("t2", "t1", "t3")


@pytest.mark.parametrize(
    ("attrs", "decayed", "expected"),
    [
        ({}, False, True),  # a method without status: every item is in memory
        ({"status": "active"}, False, True),
        ({"retained": True}, False, True),
        ({"retained": False}, False, False),  # LUFY: dropped by this session's forgetting
        ({"retained": False}, True, False),
        ({"status": "deleted"}, False, False),  # TimeRAG: deleted stays in the audit trail
        ({"status": "deleted"}, True, False),
        ({"status": "decayed"}, False, False),  # TimeRAG's recency filter skips it
        ({"status": "decayed"}, True, True),  # w/o Recency Filter: still retrievable
        ({"status": "archived"}, False, False),  # an unknown status is not recallable
    ],
)
def test_in_memory_is_the_one_meaning_of_live(attrs, decayed, expected):
    item = MemoryItem("m", "text", "fact", None, ("t1",), attrs)
    assert in_memory(item, decayed) is expected


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"memory": {"name": "timerag", "recency_filter": True}}, False),
        ({"memory": {"name": "timerag_no_recency_filter", "recency_filter": False}}, True),
        ({"memory": {"name": "lufy"}}, False),
        ({}, False),
    ],
)
def test_decayed_recallable_reads_the_recency_filter(config, expected):
    assert decayed_recallable(config) is expected
