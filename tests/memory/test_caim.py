"""CAIM paper-fidelity tests (papers/caim.md sec. 3, Table 5) on the extractive backend."""

from __future__ import annotations

import json
from datetime import date, datetime

import hydra.utils
import pytest

from recallbench.datasets import load
from recallbench.llm.task import ParseError
from recallbench.memory.caim import (
    CAIM,
    ONTOLOGY_EXPANSION_PROMPT,
    ONTOLOGY_EXPANSION_TASK,
    Ontology,
    OntologyError,
    parse_expansion,
    parse_key_events,
    parse_relevance,
    parse_review,
    parse_tags,
    resolve_dates,
    validate,
)
from recallbench.records import Episode, Query, Session, Turn
from recallbench.testing.configs import load_group_config

CONF = "conf/memory/{}.yaml"
DAYS = ("2023-05-02", "2023-05-03", "2023-05-04")
DIALOGUE = {
    0: [("Mara", "I repair old clocks in my workshop."), ("AI", "That sounds fascinating!")],
    1: [("Mara", "I play the piano every evening after dinner."), ("AI", "Lovely.")],
    2: [
        ("Mara", "I baked a sourdough bread with rosemary today."),
        ("AI", "I recommend you try adding olives next time."),
        ("Mara", "I play the piano every evening after dinner."),
    ],
}


def episode(eid: str = "e") -> Episode:
    sessions = tuple(
        Session(
            f"{eid}/{day}",
            i + 1,
            datetime.fromisoformat(f"{day}T09:00"),
            tuple(Turn(f"{eid}/{day}/t{j}", s, t) for j, (s, t) in enumerate(DIALOGUE[i])),
        )
        for i, day in enumerate(DAYS)
    )
    return Episode(eid, "gvd", ("Mara", "AI"), sessions)


def probe(ep: Episode, question: str) -> Query:
    return Query(ep.episode_id, 3, (), "Mara", datetime(2023, 5, 5, 9, 30), question)


def build(llm, embedder, name: str = "caim") -> CAIM:
    return hydra.utils.instantiate(load_group_config(CONF.format(name)), llm=llm, embedder=embedder)


@pytest.fixture
def caim(llm, embedder):
    method = build(llm, embedder)
    ep = episode()
    method.reset(ep)
    for session in ep.sessions:
        method.observe(session)
    return method, ep


def test_controller_skips_retrieval_for_general_knowledge(caim):
    method, ep = caim
    recall = method.recall(probe(ep, "What is the content of the movie Inception?"))
    assert recall.info["route"] == "none" and recall.items == ()
    assert recall.info["decisions"] == {"information_necessary": "B"}
    personal = method.recall(probe(ep, "What music do I play in the evening?"))
    assert personal.info["route"] == "ltm"
    assert any("piano" in it.text for it in personal.items)


def test_no_controller_always_retrieves(llm, embedder):
    method = build(llm, embedder, "caim_no_controller")
    ep = episode()
    method.reset(ep)
    for session in ep.sessions:
        method.observe(session)
    recall = method.recall(probe(ep, "What is the content of the movie Inception?"))
    assert recall.info["route"] == "both"


def test_date_question_retrieves_that_dates_thoughts(caim):
    method, ep = caim
    for question in ("What did we talk about on May 3rd?", "What did I tell you two days ago?"):
        recall = method.recall(probe(ep, question))
        assert recall.info["dates"] == ["2023-05-03"]
        assert recall.items, question
        assert all("2023-05-03" in it.attrs["timestamps"] for it in recall.items)
        assert any("piano" in it.text for it in recall.items)
    first = method.recall(probe(ep, "Do you remember what we talked about during our first chat?"))
    assert [it.attrs["timestamp"] for it in first.items] == ["2023-05-02"]
    assert "clocks" in first.text


def test_no_relevance_filter_passes_all_tag_matches(llm, embedder, caim):
    method, ep = caim
    plain = build(llm, embedder, "caim_no_relevance_filter")
    plain.reset(ep)
    for session in ep.sessions:
        plain.observe(session)
    # Table 5's ablation also drops time-based retrieval: the date question resolves no date
    # and, sharing no tag with any memory, retrieves nothing; the full method finds that day.
    question = "What did we talk about on May 3rd?"
    dated = method.recall(probe(ep, question))
    assert dated.info["dates"] == ["2023-05-03"] and dated.items
    undated = plain.recall(probe(ep, question))
    assert undated.info["dates"] == [] and undated.items == ()
    # No relevance filter: every tag-matched candidate is passed on, a superset of the filtered.
    q = "Which bread did I bake, and what do I play?"
    full, unfiltered = method.recall(probe(ep, q)), plain.recall(probe(ep, q))
    assert unfiltered.info["candidates"]
    assert {i.item_id for i in unfiltered.items} == set(unfiltered.info["candidates"])
    assert {i.item_id for i in full.items} <= {i.item_id for i in unfiltered.items}


def test_review_merges_duplicate_thoughts(caim):
    method, ep = caim
    piano = [it for it in method.snapshot() if "piano" in it.text]
    assert len(piano) == 1, [it.text for it in method.snapshot()]
    merged = piano[0]
    assert merged.attrs["timestamps"] == ["2023-05-03", "2023-05-04"]
    assert merged.attrs["timestamp"] == "2023-05-04"
    assert set(merged.source_ids) == {"e/2023-05-03/t0", "e/2023-05-04/t2"}
    assert len(merged.attrs["merged_from"]) == 2


def test_ltm_rows_follow_table1(caim):
    method, _ = caim
    for item in method.snapshot():
        assert item.kind == "thought" and 1 <= len(item.attrs["tags"]) <= 3
        assert all(tag in method.ontology for tag in item.attrs["tags"])
        date.fromisoformat(item.attrs["timestamp"])
    texts = [it.text for it in method.snapshot()]
    assert "Mara repairs old clocks in Mara's workshop" in texts
    assert any(t.startswith("AI recommends Mara try adding olives") for t in texts)


def test_probes_do_not_change_memory_and_no_leakage(llm, embedder, real_or_fixture_gvd):
    method = build(llm, embedder)
    for ep in real_or_fixture_gvd:
        method.reset(ep)
        seen = set()
        for session in ep.sessions:
            method.observe(session)
            seen |= {t.turn_id for t in session.turns}
        before = [it.to_dict() for it in method.snapshot()]
        expansions = list(method.expansions)
        now = datetime.combine(ep.sessions[-1].start.date(), datetime.min.time().replace(hour=10))
        for qa in ep.qa:
            recall = method.recall(
                Query(ep.episode_id, len(ep.sessions), (), ep.speakers[0], now, qa.question)
            )
            assert set(recall.source_ids()) <= seen
        assert [it.to_dict() for it in method.snapshot()] == before
        assert method.expansions == expansions


@pytest.fixture
def real_or_fixture_gvd(fixtures_dir):
    return load("gvd", fixtures_dir, language="en")


NOW = datetime(2023, 5, 6, 9, 30)  # a Saturday
SESSIONS = ("2023-04-27", "2023-04-28", "2023-05-06")
DATE_TABLE = [
    ("What did I do yesterday?", ["2023-05-05"]),
    ("the day before yesterday", ["2023-05-04"]),
    ("On May 4th, I shared some problems", ["2023-05-04"]),
    ("What did I say on June 9th?", ["2022-06-09"]),  # no year: the latest one before now
    ("April 2nd, 2022", ["2022-04-02"]),
    ("the 4th of May", ["2023-05-04"]),
    ("5/4", ["2023-05-04"]),
    ("on 2023-05-01", ["2023-05-01"]),
    ("our first conversation", ["2023-04-27"]),
    ("our second chat", ["2023-04-28"]),
    ("the last time we talked", ["2023-04-28"]),  # today's session is not "last time"
    ("two days ago", ["2023-05-04"]),
    ("3 days ago", ["2023-05-03"]),
    ("fifteen days ago", ["2023-04-21"]),  # the number words of recallbench.text
    ("a week ago", ["2023-04-29"]),
    ("a few days ago", ["2023-05-02", "2023-05-03", "2023-05-04"]),
    ("last night", ["2023-05-05"]),
    ("last Monday", ["2023-05-01"]),
    ("on Saturday", ["2023-05-06"]),
    ("last Saturday", ["2023-04-29"]),
    ("last weekend", ["2023-04-29", "2023-04-30"]),
    ("last week", [f"2023-04-{d}" for d in range(24, 31)]),
    ("this week", [f"2023-05-0{d}" for d in range(1, 7)]),
    ("May I ask you something?", []),
    ("What is the content of the movie Inception?", []),
]


@pytest.mark.parametrize(("text", "expected"), DATE_TABLE, ids=[t for t, _ in DATE_TABLE])
def test_date_resolution_table(text, expected):
    assert [d.isoformat() for d in resolve_dates(text, NOW, SESSIONS)] == expected


def test_ontology_expansion(llm):
    onto = Ontology.load()
    assert "piano" in onto and onto.path("piano") == ("hobbies", "music", "piano")
    assert "{ontology}" in ONTOLOGY_EXPANSION_PROMPT and "{text}" in ONTOLOGY_EXPANSION_PROMPT
    known = llm.run(ONTOLOGY_EXPANSION_TASK, ontology=onto.to_json(), text="I play piano music")
    assert known.value is None  # "OK": the ontology already describes the input
    new = llm.run(ONTOLOGY_EXPANSION_TASK, ontology=onto.to_json(), text="I repair harpsichords")
    added = onto.merge(new.value)
    assert "harpsichords" in added and onto.path("harpsichords")[0] == "misc"
    assert onto.select("the harpsichords need tuning") == ["harpsichords", "mentioned", "misc"]
    reply = json.dumps({"hobbies": {"music": ["piano", "ukulele"]}, "space": {"astro": ["moon"]}})
    assert set(onto.merge(parse_expansion(reply))) == {"ukulele", "space", "astro", "moon"}
    assert parse_expansion("OK") is None
    with pytest.raises(ParseError):
        parse_expansion('{"a": {"b": ["two words"]}}')
    with pytest.raises(OntologyError, match="3 levels"):
        validate({"a": {"b": {"c": ["d"]}}}, "x")


def test_parsers():
    assert parse_tags("Piano, music,spaceship", frozenset({"piano", "music"})) == ["piano", "music"]
    with pytest.raises(ParseError):
        parse_tags("spaceship", frozenset({"piano"}))
    with pytest.raises(ParseError):
        parse_tags("", frozenset({"piano"}))  # an empty reply is not an answer


def test_offline_select_tags_says_none_when_nothing_matches_and_that_is_no_failure(llm):
    """Seen in the matrix: CAIM on LUFY's logs was marked DEGRADED (9 of 46 Select Tags calls
    'failed to parse') although the offline twin had decided, correctly, that no ontology term
    occurs in the command."""
    from recallbench.memory.caim._tasks import offline_select_tags, select_tags_task

    ontology = json.dumps({"hobbies": {"music": ["piano"]}})
    assert offline_select_tags(ontology, "we talked about the weather") == "NONE"
    task = select_tags_task(frozenset({"hobbies", "music", "piano"}))
    result = llm.run(task, ontology=ontology, command="we talked about the weather", skip=())
    assert result.value == [] and llm.usage.to_dict()["totals"].get("parse_failures", 0) == 0
    played = llm.run(task, ontology=ontology, command="I play the piano", skip=()).value
    assert played == ["piano", "music", "hobbies"]  # padded with its parents
    reply = "Mara bakes bread, with rosemary;2023-05-04,AI recommends olives;2023-05-04"
    assert parse_key_events(reply) == [
        ("Mara bakes bread, with rosemary", "2023-05-04"),
        ("AI recommends olives", "2023-05-04"),
    ]
    assert parse_key_events("") == []
    assert parse_relevance("[2] x | y | 2023-05-04", ("a b", "c d")) == [1]
    assert parse_relevance("''", ("a",)) == []
    assert parse_relevance("Mara plays the piano", ("Mara plays the piano", "x y")) == [0]
    assert parse_review("[1,2] piano | Mara plays piano | 2023-05-04", 2)[0][0] == [0, 1]
    with pytest.raises(ParseError):
        parse_review("[1,5] piano | x | 2023-05-04", 2)
    # a memory named again stays with its first line; a line left with none is skipped
    twice = "[1] piano | a | 2023-05-04\n[1,2] music | b | 2023-05-05\n[2] x | c | 2023-05-06"
    assert [r[0] for r in parse_review(twice, 2)] == [[0], [1]]
    assert [r[2] for r in parse_review(twice, 2)] == ["a", "b"]


def test_structured_relevance_and_review_replies_can_only_name_listed_items():
    """SmolLM2 under a ``\\d{1,3}`` grammar answered ``[201]`` for 3 candidates and reviewed
    memory ``[48]`` of a handful (bench/structured.py): the reply shapes now list the items."""
    import re

    from recallbench.memory.caim._post import review_reply, review_task
    from recallbench.memory.caim._shapes import relevance_reply
    from recallbench.memory.caim._tasks import relevance_task

    shape = relevance_task(("a b", "c d", "e f")).reply
    assert shape == relevance_reply(3)
    for ok in ("", "[3]", "[1], [3]", "[2],[1]"):
        assert re.fullmatch(shape.pattern, ok) and parse_relevance(ok, ("a", "b", "c")) is not None
    for bad in ("[4]", "[0]", "[201]", "[1], [2], [3], [1]"):
        assert not re.fullmatch(shape.pattern, bad), bad
    assert re.fullmatch(relevance_reply(40).pattern, "[40], [12]")
    assert not re.fullmatch(relevance_reply(40).pattern, "[41]")
    assert relevance_reply(0).pattern == ""

    shape = review_task(2).reply
    good = "[1,2] piano | Mara plays piano | 2023-05-04"
    assert re.fullmatch(shape.pattern, good) and parse_review(good, 2)[0][0] == [0, 1]
    for bad in ("[1,5] piano | x y z | 2023-05-04", "[3] piano | x y z | 2023-05-04"):
        assert not re.fullmatch(shape.pattern, bad), bad
    three = "\n".join(f"[1] piano | line {i} | 2023-05-04" for i in range(3))
    assert not re.fullmatch(review_reply(2).pattern, three)  # at most n lines


def test_an_expansion_listing_a_term_twice_keeps_it_at_its_first_place():
    """SmolLM2 listed "beautiful" under two subcategories, "challenge" as a subcategory of two
    categories and "sunny" as a category and its own tag (bench/structured.py): each later
    place is dropped (with what is under it) instead of the whole expansion."""
    reply = {
        "art": {"painting": ["oil", "beautiful"], "views": ["beautiful", "meadow"]},
        "sunny": {"weather": ["sunny", "rain"], "painting": ["acrylic"]},
        "views": {"hills": ["green"]},
    }
    assert parse_expansion(json.dumps(reply)) == {
        "art": {"painting": ["oil", "beautiful"], "views": ["meadow"]},
        "sunny": {"weather": ["rain"]},
    }
    with pytest.raises(ParseError, match="not a single word"):
        parse_expansion(json.dumps({"art": {"painting": ["oil paint"]}}))
