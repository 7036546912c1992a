"""Paper-fidelity tests of the classic baselines: retrieval, full history, gold memory, summaries."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from recallbench.errors import ConfigError, DatasetFormatError
from recallbench.llm.task import ParseError
from recallbench.memory.all_memories import AllMemories
from recallbench.memory.blocks.gold import attribute
from recallbench.memory.blocks.prompts import THEANINE_RESPONSE_PROMPT
from recallbench.memory.blocks.summarize import extractive_summary, parse_sentences
from recallbench.memory.gold_memory import GoldMemory
from recallbench.memory.memory_retrieval import MemoryRetrieval
from recallbench.memory.no_memory import NoMemory
from recallbench.memory.session_summaries import SessionSummaries
from recallbench.records import Episode, MemoryItem, Query, Recall, Session, Turn

PAPERS = Path(__file__).resolve().parents[3] / "shared" / "papers"

FACTS = [
    "I adopted a beagle puppy last spring.",
    "I work night shifts as a nurse.",
    "My sister lives in Lisbon.",
    "I am training for a marathon in October.",
    "I grow tomatoes and basil on my balcony.",
    "My car broke down on the highway.",
    "I play the violin in a community orchestra.",
    "I am allergic to peanuts.",
    "My favourite food is spicy ramen.",
    "I moved to a new apartment downtown.",
]


def _facts_episode() -> Episode:
    """One session of ten self-disclosures (one turn each), then a current session."""
    s1 = Session(
        "f/s1",
        1,
        datetime(2023, 1, 2),
        tuple(Turn(f"f/s1t{j}", "Ann", text) for j, text in enumerate(FACTS)),
        {"summary": FACTS},
    )
    s2 = Session("f/s2", 2, datetime(2023, 1, 9), (Turn("f/s2t0", "Ben", "x"),), {})
    return Episode("f", "tiny", ("Ann", "Ben"), (s1, s2))


# --- memory retrieval (Xu et al. 2022; THEANINE k = 6) ---------------------------------------


@pytest.mark.parametrize("source", ["gold", "llm"])
def test_memory_retrieval_returns_the_k_most_similar(llm, embedder, source):
    episode = _facts_episode()
    method = MemoryRetrieval(llm, embedder, k=6, source=source, max_sentences=20)
    method.reset(episode)
    method.observe(episode.sessions[0])
    store = method.snapshot()
    assert len(store) == 10
    history = (Turn("f/s2t0", "Ben", "How is the marathon training going with your night shifts?"),)
    query = Query("f", 2, history, "Ann", None)
    recall = method.recall(query)

    sims = embedder.encode([i.text for i in store]) @ embedder.encode([history[0].text])[0]
    expected = [store[i].item_id for i in np.argsort(-sims, kind="stable")[:6]]
    assert [i.item_id for i in recall.items] == expected
    assert recall.info["scores"] == sorted(recall.info["scores"], reverse=True)
    assert {"marathon", "night"} <= set(" ".join(i.text for i in recall.items[:2]).split())


def test_memory_retrieval_with_fewer_memories_than_k_returns_all(llm, embedder, episode, query_at):
    method = MemoryRetrieval(llm, embedder, k=50)
    method.reset(episode)
    method.observe(episode.sessions[0])
    recall = method.recall(query_at(episode, 2, 1))
    assert {i.item_id for i in recall.items} == {i.item_id for i in method.snapshot()}


def test_memory_retrieval_query_is_the_question_when_given(llm, embedder):
    episode = _facts_episode()
    method = MemoryRetrieval(llm, embedder, k=1, source="gold")
    method.reset(episode)
    method.observe(episode.sessions[0])
    query = Query(
        "f", 2, (Turn("t", "Ben", "Hello there"),), "Ann", None, "Where does your sister live?"
    )
    assert method.recall(query).items[0].text == "My sister lives in Lisbon."


def test_k_must_be_positive(llm, embedder):
    with pytest.raises(ConfigError, match="k must be"):
        MemoryRetrieval(llm, embedder, k=0)


# --- gold memory (Bae "Memory gold*") ----------------------------------------------------------


def test_gold_memory_uses_the_dataset_memory_of_the_current_session(
    llm, embedder, episode, query_at
):
    method = GoldMemory(llm, embedder)
    method.reset(episode)
    method.observe(episode.sessions[0])
    assert [i.text for i in method.snapshot()] == episode.sessions[1].gold["memory"]
    method.observe(episode.sessions[1])
    recall = method.recall(query_at(episode, 3, 1))
    assert [i.text for i in recall.items] == episode.sessions[2].gold["memory"]
    past = tuple(t.turn_id for s in episode.sessions[:2] for t in s.turns)
    assert all(i.source_ids == past for i in recall.items)
    assert recall.text == "\n".join(episode.sessions[2].gold["memory"])


def test_gold_memory_top_k(llm, embedder, episode, query_at):
    method = GoldMemory(llm, embedder, k=1)
    method.reset(episode)
    for s in episode.sessions[:2]:
        method.observe(s)
    recall = method.recall(query_at(episode, 3, 1))  # "How was your hike ...?"
    assert [i.text for i in recall.items] == ["Alice hikes in the mountains."]


def test_gold_memory_needs_memory_in_the_data(llm, embedder, episode):
    bare = replace(episode, sessions=tuple(replace(s, gold={}) for s in episode.sessions))
    with pytest.raises(DatasetFormatError, match="gold 'memory' missing"):
        GoldMemory(llm, embedder).reset(bare)


# --- per-session summaries -------------------------------------------------------------------


def test_extractive_summary_keeps_first_person_statements():
    dialogue = (
        "A: Hi! I just adopted a puppy named Rex. How are you?\n"
        "B: I see.\n"
        "B: Do you like my new haircut?\n"
        "B: My sister moved to Lisbon last month."
    )
    text = extractive_summary(dialogue=dialogue, min_words=4)
    assert text.splitlines() == [
        "A: I just adopted a puppy named Rex.",
        "B: My sister moved to Lisbon last month.",
    ]
    assert extractive_summary(dialogue=dialogue, speakers=("B",)).splitlines() == [
        "B: My sister moved to Lisbon last month."
    ]
    # nothing first-person (e.g. another language): the longest statement stands in
    assert (
        extractive_summary(dialogue="A: 오늘은 산책을 했어요\nB: 좋네요")
        == "A: 오늘은 산책을 했어요"
    )


def test_extractive_summary_caps_sentences_keeping_order():
    dialogue = "\n".join(f"A: I {'really ' * j}like item {j}." for j in range(6))
    lines = extractive_summary(dialogue=dialogue, max_sentences=2).splitlines()
    assert lines == [
        "A: I really really really really like item 4.",
        "A: I " + "really " * 5 + "like item 5.",
    ]


@pytest.mark.parametrize(
    "reply, sentences",
    [
        ("- Alice has a dog.\n- Bob is a nurse.", ("Alice has a dog.", "Bob is a nurse.")),
        (
            "Memory sentences:\n1. Alice has a dog.\n2) Bob is a nurse.",
            ("Alice has a dog.", "Bob is a nurse."),
        ),
    ],
)
def test_parse_sentences(reply, sentences):
    assert parse_sentences(reply) == sentences


def test_parse_sentences_rejects_empty():
    with pytest.raises(ParseError):
        parse_sentences("\n  \n")


def test_summaries_point_to_their_turns(llm, embedder, episode):
    method = SessionSummaries(llm, embedder)
    method.reset(episode)
    method.observe(episode.sessions[0])
    items = {i.text: i for i in method.snapshot()}
    rex = items["Alice: I just adopted a puppy named Rex."]
    assert rex.source_ids == ("ep1/s1t0",) and rex.created == episode.sessions[0].start
    assert rex.kind == "summary" and rex.attrs["session"] == 1
    assert llm.usage.to_dict()["tasks"]["memory.summarize_session"]["calls"] >= 1


def test_gold_summaries_and_personas(llm, embedder, episode, query_at):
    method = SessionSummaries(llm, embedder, source="gold")
    method.reset(episode)
    for s in episode.sessions[:2]:
        method.observe(s)
    recall = method.recall(query_at(episode, 3, 1))
    assert recall.text.splitlines() == [
        "Session 1:",
        *episode.sessions[0].gold["summary"],
        "Session 2:",
        *episode.sessions[1].gold["summary"],
    ]
    personas = SessionSummaries(llm, embedder, source="gold", gold_key="persona")
    personas.reset(episode)
    personas.observe(episode.sessions[1])
    assert [(i.text, i.kind) for i in personas.snapshot()] == [
        ("Alice: I love hiking.", "fact"),
        ("Bob: I play the violin.", "fact"),
    ]


def test_gold_source_names_missing_keys(llm, embedder, episode):
    method = SessionSummaries(llm, embedder, source="gold", gold_key="summary")
    method.reset(episode)
    with pytest.raises(DatasetFormatError, match=r"ep1/s1: gold 'summary' missing"):
        method.observe(replace(episode.sessions[0], gold={"memory": []}))


@pytest.mark.parametrize(
    "params, match",
    [
        ({"source": "web"}, "source"),
        ({"gold_key": "memory"}, "gold_key"),
        ({"prompt_style": "x"}, "prompt_style"),
    ],
)
def test_bad_options_are_config_errors(llm, embedder, params, match):
    with pytest.raises(ConfigError, match=match):
        AllMemories(llm, embedder, **params)


# --- prompts and offline responses ---------------------------------------------------------------


def test_fig24_prompt_is_verbatim():
    paper = PAPERS / "theanine.md"
    if not paper.exists():
        pytest.skip("THEANINE paper text not beside the repository")
    lines = paper.read_text(encoding="utf-8").splitlines()
    start = next(
        i for i, line in enumerate(lines) if line.startswith("Generate the most plausible")
    )
    text = "\n".join(lines[start : start + 9]).replace("\\_", "_")
    ours = THEANINE_RESPONSE_PROMPT.format(
        memory="{refined_timelines}", dialogue="{current dialogue context}", speaker="{speaker tag}"
    )
    assert ours == text


def test_carecall_prompt_puts_memory_before_the_session(llm, embedder, episode, query_at):
    method = GoldMemory(llm, embedder, prompt_style="carecall")
    method.reset(episode)
    for s in episode.sessions[:2]:
        method.observe(s)
    query = query_at(episode, 3, 1)
    content = method.prompt(query, method.recall(query))[0]["content"]
    assert content.index("Alice hikes in the mountains.") < content.index("Current session:")
    assert content.endswith("Bob: How was your hike in the mountains this weekend?\nAlice:")
    empty = NoMemory(llm, embedder, prompt_style="carecall").prompt(query, Recall())[0]["content"]
    assert "Memory" not in empty


def test_offline_response_picks_the_overlapping_memory(llm, embedder, query_at, episode):
    method = NoMemory(llm, embedder)
    method.reset(episode)
    query = query_at(episode, 3, 1)  # "How was your hike in the mountains this weekend?"
    items = (
        MemoryItem("a", "Bob: I work as a nurse.", "fact", None),
        MemoryItem("b", "Alice: I love hiking in the mountains.", "fact", None),
    )
    assert method.offline_response(query, Recall(items)) == "I love hiking in the mountains."
    assert method.offline_response(query, Recall()) == "I see. Tell me more about mountains."


def test_attribution_to_turns():
    session = Session(
        "a/s1",
        1,
        None,
        (
            Turn("a/t0", "A", "Hi Bob! I adopted a puppy."),
            Turn("a/t1", "B", "I am a nurse.", {"persona_text": "I work in a hospital."}),
        ),
    )
    assert attribute("A: I adopted a puppy.", session) == ("a/t0",)
    assert attribute("B: I work in a hospital.", session) == ("a/t1",)  # a per-turn gold label
    assert attribute("Bob", session) == ("a/t0", "a/t1")  # too short to pin down: whole session
    assert attribute("A adopted a pup.", session) == ("a/t0", "a/t1")  # abstractive


@pytest.mark.parametrize(
    "gold, expected",
    [
        (
            {"summary": ["Ann moved to Lisbon. Ben got a dog!"]},
            ["Ann moved to Lisbon.", "Ben got a dog!"],
        ),
        (
            {
                "persona_session": {"Ann": ["I moved."]},
                "persona": {"Ann": ["I am old.", "I moved."]},
            },
            ["Ann: I moved."],
        ),
        ({"persona": {"Ann": ["I am old."]}}, ["Ann: I am old."]),
    ],
)
def test_gold_auto_prefers_per_session_annotations(llm, embedder, gold, expected):
    session = Session("g/s1", 1, None, (Turn("g/t0", "Ann", "hello"),), gold)
    method = SessionSummaries(llm, embedder, source="gold")
    method.reset(Episode("g", "tiny", ("Ann", "Ben"), (session,)))
    method.observe(session)
    assert [i.text for i in method.snapshot()] == expected
