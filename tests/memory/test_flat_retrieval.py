"""Flat retrieval (LongMemEval's design axes): granularity, fact keys, time-aware search."""

from __future__ import annotations

from datetime import datetime

import pytest

from recallbench import CONF_DIR
from recallbench.cli.build import build_memory_factory
from recallbench.datasets.longmemeval import load
from recallbench.embed.hashing import HashingEmbedder
from recallbench.llm import build_llm
from recallbench.memory.flat_retrieval import time_range, user_facts
from recallbench.records import Query, Turn
from recallbench.testing.configs import load_group_config


def _method(name: str):
    node = load_group_config(CONF_DIR / "memory" / f"{name}.yaml")
    return build_memory_factory(node, build_llm({"backend": "extractive"}), HashingEmbedder())()


def _replayed(name: str, fixtures_dir, question_id: str = "fx000002"):
    episode = load(fixtures_dir, "s", questions=question_id)[0]
    method = _method(name)
    method.reset(episode)
    method.prefetch_episode(episode)
    for session in episode.sessions:
        method.observe(session)
    return episode, method


def test_round_values_are_user_turn_plus_reply(fixtures_dir):
    episode, method = _replayed("flat_retrieval", fixtures_dir)
    store = method.snapshot()
    users = sum(1 for s in episode.sessions for t in s.turns if t.speaker == "user")
    assert len(store) == users  # one round per user turn
    first = store[0]
    assert first.kind == "round" and len(first.source_ids) == 2
    assert first.text.startswith("user: ") and "\n\nassistant: " in first.text


def test_session_values_and_bm25_rank_the_evidence_first(fixtures_dir):
    episode, method = _replayed("flat_retrieval_session", fixtures_dir)
    assert [i.kind for i in method.snapshot()] == ["session"] * len(episode.sessions)
    _, bm25 = _replayed("flat_retrieval_bm25", fixtures_dir)
    query = Query(episode.episode_id, 4, (), "user", None, "How far did I ride on my gravel bike?")
    recall = bm25.recall(query)
    assert recall.items[0].source_ids[0].endswith("answer_fx0b1_3")
    assert recall.text.startswith("\n### Session 1:\nSession Date: 2023/0")


def test_user_facts_are_first_person_sentences_of_the_user():
    turns = [
        Turn("t1", "user", "Hello there. I rode 40 kilometers today. The weather was nice."),
        Turn("t2", "assistant", "I think that is great."),
    ]
    assert user_facts(turns) == ["I rode 40 kilometers today."]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What did I buy two weeks ago?", (datetime(2023, 5, 11), datetime(2023, 5, 17))),
        ("Where did I eat last week?", (datetime(2023, 5, 14), datetime(2023, 5, 28))),
        ("What did I plant in May?", (datetime(2023, 5, 1), datetime(2023, 6, 1))),
        ("What did I plant?", None),
    ],
)
def test_time_range(question, expected):
    assert time_range(question, datetime(2023, 5, 28)) == expected


def test_time_aware_search_narrows_to_the_range(fixtures_dir):
    episode, method = _replayed("flat_retrieval_time", fixtures_dir)
    now = datetime(2023, 7, 10, 20, 0)
    recall = method.recall(
        Query(episode.episode_id, 4, (), "user", now, "What did I do 2 days ago?")
    )
    # 2 days with 2 days of slack either side (never past the question date)
    assert recall.info["time_range"] == ["2023-07-06T20:00:00", "2023-07-10T20:00:00"]
    assert {i.created for i in recall.items} == {datetime(2023, 7, 8, 17, 30)}
    unnarrowed = method.recall(Query(episode.episode_id, 4, (), "user", now, "What did I do?"))
    assert "time_range" not in unnarrowed.info and len(unnarrowed.items) > len(recall.items)
