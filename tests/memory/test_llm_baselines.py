"""RSum-LLM, MemoChat and COMEDY: distinctive behaviour, reply parsers, fallbacks, no leakage."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from recallbench.llm import LLM, Completion, ParseError
from recallbench.memory.blocks.llm_common import parse_options
from recallbench.memory.comedy import Comedy, parse_compressed, parse_session_memories, third_person
from recallbench.memory.memochat import MemoChat, parse_memos
from recallbench.memory.rsum_llm import RSumLLM, parse_memory
from recallbench.records import Episode, Query, Session, Turn
from recallbench.testing.backend import ReplyBackend

START = datetime(2023, 3, 1, 18, 0)


def episode(dialogues: list[list[tuple[str, str]]], episode_id: str = "e") -> Episode:
    """Build an episode of Alice and Bob, one session per dialogue, a week apart."""
    sessions = tuple(
        Session(
            f"{episode_id}/s{i}",
            i,
            START + timedelta(days=7 * (i - 1)),
            tuple(Turn(f"{episode_id}/s{i}t{j}", spk, text) for j, (spk, text) in enumerate(d)),
        )
        for i, d in enumerate(dialogues, 1)
    )
    return Episode(episode_id, "tiny", ("Alice", "Bob"), sessions)


def query(ep: Episode, text: str, question: str | None = None) -> Query:
    """A query after the observed sessions: Bob said ``text``, Alice answers."""
    turn = Turn(f"{ep.episode_id}/now", "Bob", text)
    return Query(ep.episode_id, len(ep.sessions) + 1, (turn,), "Alice", None, question)


class Script(ReplyBackend):
    """A scripted model behind the real LLM facade: the first rule whose key is in the prompt."""

    name, local, offline, is_async, model, context_length = "script", True, False, False, "s", 999

    def __init__(self, rules: list[tuple[str, str]]):
        self.rules, self.prompts = rules, []

    def complete(self, messages, dec):
        prompt = messages[-1]["content"]
        self.prompts.append(prompt)
        reply = next(r for key, r in self.rules if key in prompt)
        return Completion(reply, 10, 5, 0.0)

    def count_tokens(self, text):
        return len(text.split())

    def close(self):
        pass


JOB = [
    ("Alice", "I work as a nurse at the city hospital."),
    ("Bob", "I just bought a red bicycle for my commute."),
]
JOB_CHANGE = [
    ("Alice", "I work as a nurse at the county hospital now."),
    ("Bob", "I am learning to bake sourdough bread."),
]


# --- RSum-LLM ----------------------------------------------------------------------------


def test_rsum_pool_is_rewritten_recursively(llm, embedder):
    method = RSumLLM(llm, embedder)
    ep = episode([JOB, JOB_CHANGE])
    method.reset(ep)
    method.observe(ep.sessions[0])
    first = method.snapshot()
    method.observe(ep.sessions[1])
    pool = [item.text for item in method.snapshot()]
    assert any("county hospital" in t for t in pool)
    assert not any("city hospital" in t for t in pool)  # superseded by the newer statement
    assert first[1] in method.snapshot()  # the unchanged sentence is carried over as is
    assert method.version == 2
    recall = method.recall(query(ep, "How is work?"))
    assert [i.item_id for i in recall.items] == [i.item_id for i in method.snapshot()]


def test_rsum_pool_is_bounded_and_keeps_the_latest(llm, embedder):
    trips = {"Paris": "Ann", "Rome": "Ben", "Oslo": "Cy", "Lima": "Di", "Cairo": "Ed"}
    chats = [[("Alice", f"I visited {c} with my cousin {n}.")] for c, n in trips.items()]
    method = RSumLLM(llm, embedder, max_sentences=3)
    ep = episode(chats)
    method.reset(ep)
    for session in ep.sessions:
        method.observe(session)
    texts = [item.text for item in method.snapshot()]
    assert len(texts) == 3
    assert ["Oslo" in texts[0], "Lima" in texts[1], "Cairo" in texts[2]] == [True] * 3


def test_rsum_update_sees_the_previous_pool_and_survives_bad_replies(embedder):
    script = Script(
        [
            ("[Previous Memory]\n(empty)", "Updated memory:\n- Alice is a nurse.\n- Bob bikes."),
            ("[Previous Memory]\nAlice is a nurse.\nBob bikes.", "The memory remains the same."),
        ]
    )
    method = RSumLLM(LLM(script), embedder)
    ep = episode([JOB, JOB_CHANGE])
    method.reset(ep)
    method.observe(ep.sessions[0])
    method.observe(ep.sessions[1])
    assert [i.text for i in method.snapshot()] == ["Alice is a nurse.", "Bob bikes."]
    assert method.failures == {"update": 1}
    # abstractive sentences are traced to the turns they overlap, never outside the episode
    assert method.snapshot()[0].source_ids == ("e/s1t0",)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            "Sure! Here is the updated memory:\n\n[Updated Memory]\n1. Alice adopted a dog.\n"
            "2. Bob is a nurse.",
            ("Alice adopted a dog.", "Bob is a nurse."),
        ),
        (
            "Updated memory: Alice adopted a dog. Bob is a nurse.",
            ("Alice adopted a dog.", "Bob is a nurse."),
        ),
        (
            "User:\n* Alice likes jazz\nBot:\n* Bob plays drums",
            ("Alice likes jazz", "Bob plays drums"),
        ),
    ],
)
def test_rsum_parser_on_realistic_replies(reply, expected):
    assert parse_memory(reply) == expected


@pytest.mark.parametrize("reply", ["", "[Updated Memory]\n", "The memory remains unchanged."])
def test_rsum_parser_rejects_empty_or_meta_replies(reply):
    with pytest.raises(ParseError):
        parse_memory(reply)


# --- MemoChat ----------------------------------------------------------------------------

TOPICS = [
    [
        ("Alice", "My garden tomatoes are finally ripe."),
        ("Bob", "Tomatoes from the garden taste the best."),
        ("Alice", "I am training for the city marathon in May."),
        ("Bob", "A marathon is a big goal, good luck training."),
    ],
    [("Bob", "I adopted a grey kitten called Miso."), ("Alice", "Miso is a cute kitten name.")],
]


def test_memochat_selects_the_memo_whose_topic_matches(llm, embedder):
    method = MemoChat(llm, embedder)
    ep = episode(TOPICS)
    method.reset(ep)
    for session in ep.sessions:
        method.observe(session)
    topics = [item.attrs["topic"] for item in method.snapshot()]
    assert len(topics) == 3 and "marathon" in topics[1]  # one memo per topic segment
    recall = method.recall(query(ep, "How is the marathon training going?"))
    assert [i.item_id for i in recall.items] == ["e/s1/memo1"]
    assert recall.items[0].source_ids == ("e/s1t2", "e/s1t3")  # exactly the topic's lines
    assert "Dialogue:\nAlice: I am training for the city marathon in May." in recall.text
    assert method.recall(query(ep, "Did you watch the election results?")).items == ()  # NOTO


def test_memochat_llm_replies_drive_memos_and_selection(embedder):
    script = Script(
        [
            (
                "conversation between",
                "```json\n[{'topic': 'gardening', 'summary': 'Alice grows "
                "tomatoes.', 'start': '1', 'end': '2'}, {'topic': 'marathon', 'start': 3, 'end': 99},]\n```",
            ),
            ("Query sentence", "Task Result: 2"),
        ]
    )
    method = MemoChat(LLM(script), embedder)
    ep = episode(TOPICS[:1])
    method.reset(ep)
    method.observe(ep.sessions[0])
    memos = method.snapshot()
    assert [(m.attrs["start"], m.attrs["end"]) for m in memos] == [(1, 2), (3, 4)]  # clamped
    assert (
        "(3) NOTO"
        in method.select_task.render(
            query="q", n_options=3, none_option=3, options="(1) a\n(2) b\n(3) NOTO"
        )[0]["content"]
    )
    recall = method.recall(query(ep, "anything"))
    assert [i.attrs["topic"] for i in recall.items] == ["marathon"]
    assert "(3) NOTO: none of the others" in script.prompts[-1]


def test_memochat_counts_malformed_replies_and_falls_back(embedder):
    script = Script([("conversation between", "I'm sorry, I can't."), ("Query", "Sure thing!")])
    method = MemoChat(LLM(script), embedder)
    ep = episode(TOPICS[:1])
    method.reset(ep)
    method.observe(ep.sessions[0])
    assert len(method.snapshot()) == 2  # the offline memos stand in
    recall = method.recall(query(ep, "Any marathon news?"))
    assert method.failures == {"write": 1, "select": 1}
    assert [i.attrs["start"] for i in recall.items] == [3]  # offline lexical selection


@pytest.mark.parametrize(
    ("reply", "topics"),
    [
        (
            'Task Result: [{"topic": "pets", "summary": "Bob has a cat.", "start": 1, "end": 2}]',
            ["pets"],
        ),
        ('{"memos": [{"topic": "pets", "start": "line 1", "end": "line 3"}]}', ["pets"]),
        ("{'topic': 'pets', 'summary': 'x', 'start': 1, 'end': 2}", ["pets"]),
        ('[{"topic": "", "start": 1, "end": 2}, {"topic": "b", "start": 3, "end": 4}]', ["b"]),
    ],
)
def test_memochat_write_parser_tolerates_drift(reply, topics):
    assert [m["topic"] for m in parse_memos(reply)] == topics


@pytest.mark.parametrize("reply", ["no json here", "[]", '[{"topic": "a"}]', "[{'topic': 'a',"])
def test_memochat_write_parser_rejects(reply):
    with pytest.raises(ParseError):
        parse_memos(reply)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("2#5", (1, 4)),
        ("Task Result: 5#2#2", (4, 1)),
        ("Options 1 and 3.", (0, 2)),
        ("6", ()),
        ("NOTO", ()),
        ("None of them.", ()),
        ("7#2", (1,)),
    ],
)
def test_selection_parser(reply, expected):
    assert parse_options(reply, 5, none_option=6) == expected


def test_selection_parser_rejects_replies_without_an_option():
    with pytest.raises(ParseError):
        parse_options("I think the first one.", 5, none_option=6)


# --- COMEDY ------------------------------------------------------------------------------

COMEDY_CHATS = [
    [("Alice", "I love jazz concerts downtown."), ("Bob", "I fixed my old car yesterday.")],
    [("Alice", "I moved into a new flat near the river."), ("Bob", "My car broke down again.")],
    [("Alice", "I went to a jazz concert again, I love jazz."), ("Bob", "I am so tired today.")],
]


def test_comedy_compresses_sessions_into_events_portraits_relation(llm, embedder):
    method = Comedy(llm, embedder, select=False)
    ep = episode(COMEDY_CHATS)
    method.reset(ep)
    for session in ep.sessions:
        method.observe(session)
    compressed = [i for i in method.snapshot() if i.attrs["layer"] == "compressed"]
    roles = [i.attrs.get("role") for i in compressed]
    assert roles.count("event") >= 2 and roles.count("relation") == 1
    events = [i.text for i in compressed if i.kind == "event"]
    assert "Alice moved into a new flat near the river." in events  # third person
    assert "Bob's car broke down again." in events
    portraits = [i.text for i in compressed if i.attrs["role"] == "portrait"]
    assert portraits[0].startswith("Alice went to a jazz concert again, Alice loves jazz.")
    assert any("Bob is so tired today." in p for p in portraits)  # emotion goes to the portrait
    relation = next(i for i in compressed if i.attrs["role"] == "relation")
    assert "over 3 sessions" in relation.text and relation.kind == "profile"
    assert method.version == 3  # re-compressed after every session
    recall = method.recall(query(ep, "Any good jazz lately?"))
    assert len(recall.items) == len(compressed)  # select: false shows everything


def test_comedy_selects_compressed_items_for_the_context(llm, embedder):
    method = Comedy(llm, embedder)
    ep = episode(COMEDY_CHATS)
    method.reset(ep)
    for session in ep.sessions:
        method.observe(session)
    recall = method.recall(query(ep, "How is your old car?"))
    assert recall.items and all("car" in i.text for i in recall.items)


def test_comedy_llm_replies_and_fallbacks(embedder):
    script = Script(
        [
            ("Extract the memories", "Alice: Alice loves jazz.\nBob: Bob fixed his car."),
            (
                "Compress them",
                "Here you go.\n**Events:**\n1. Bob fixed his car.\n**User Portrait:** "
                "Alice loves jazz.\n**User-Bot Relationship:** Friendly neighbours.",
            ),
            ("Select the", "3"),
        ]
    )
    method = Comedy(LLM(script), embedder)
    ep = episode(COMEDY_CHATS[:1])
    method.reset(ep)
    method.observe(ep.sessions[0])
    compressed = [i for i in method.snapshot() if i.attrs["layer"] == "compressed"]
    assert [(i.kind, i.text) for i in compressed] == [
        ("event", "Bob fixed his car."),
        ("profile", "Alice loves jazz."),
        ("profile", "Friendly neighbours."),
    ]
    assert compressed[0].source_ids == ("e/s1t1",)
    assert method.recall(query(ep, "hi")).items == (compressed[2],)
    script.rules[1] = ("Compress them", "I could not compress this.")
    method.observe(ep.sessions[0])
    assert method.failures["compress"] == 1
    assert any(i.attrs.get("role") == "relation" for i in method.snapshot())  # offline stood in


def test_comedy_parsers():
    parts = parse_compressed(
        "Events:\n- A moved.\nPortraits:\n- A is shy\nRelationship: old friends"
    )
    assert parts == {
        "events": ("A moved.",),
        "portraits": ("A is shy",),
        "relation": ("old friends",),
    }
    assert parse_compressed("Past events: A moved house\n")["events"] == ("A moved house",)
    with pytest.raises(ParseError):
        parse_compressed("Alice likes jazz and Bob likes cars.")
    assert parse_session_memories("No memory.") == ()
    assert parse_session_memories("- Alice: likes jazz") == ("Alice: likes jazz",)
    with pytest.raises(ParseError):
        parse_session_memories("Memories:")
    assert (
        third_person("Bo", "My dog and I have fun; I'm glad.", 20)
        == "Bo's dog and Bo has fun; Bo is glad."
    )


# --- no leakage, no state change on probes -------------------------------------------------


@pytest.mark.parametrize("cls", [RSumLLM, MemoChat, Comedy])
def test_no_leakage_and_probes_do_not_change_state(cls, llm, embedder):
    ep = episode([*TOPICS, *COMEDY_CHATS])
    method = cls(llm, embedder)
    method.reset(ep)
    past = {t.turn_id for s in ep.sessions[:3] for t in s.turns}
    for session in ep.sessions[:3]:
        method.observe(session)
    before = method.snapshot()
    assert before and all(set(i.source_ids) <= past for i in before)
    probe = Query(ep.episode_id, 3, (), "Alice", None, "Where did Alice move to?")
    recall = method.recall(probe)
    assert set(recall.source_ids()) <= past
    assert all("river" not in i.text for i in recall.items)  # session 4 was never observed
    assert method.snapshot() == before
