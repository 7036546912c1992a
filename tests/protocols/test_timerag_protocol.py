"""The ``timerag`` protocol and its measures (TimeRAG-Memory sec. 4, Tables IV-VI, XI).

Every expected value below is computed by hand from the definitions in
``recallbench.protocols.timerag.scores``.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from recallbench.embed import HashingEmbedder
from recallbench.llm import build_llm
from recallbench.memory.no_memory import NoMemory
from recallbench.memory.timerag import TimeRAG
from recallbench.protocols.timerag import TimeRAGProtocol, known_before, split_single
from recallbench.protocols.timerag import scores as ts
from recallbench.records import Episode, Prediction, Session, Turn
from recallbench.testing.stub import StubServer

T0 = datetime(2024, 1, 1)
S1, S2 = "Speaker 1", "Speaker 2"


def _words(*w: str) -> frozenset[str]:
    return frozenset(w)


# -- the definitions, by hand -----------------------------------------------------------------


def test_content_words_are_porter_stems_without_stopwords_or_speaker_names():
    assert ts.content("I have two dogs.") == _words("two", "dog")
    assert ts.content("Speaker 1 likes dogs", drop=[S1]) == _words("like", "dog")


def test_written_memories_match_gold_facts_one_to_one_by_descending_f1():
    memories = [(S1, _words("two", "dog")), (S2, _words("pizza")), (None, _words("x", "y"))]
    facts = [
        (S1, _words("two", "dog")),
        (S2, _words("pizza", "love")),  # F1 with {pizza} = 2 * 1 * 0.5 / 1.5 = 0.667
        (S1, _words("x", "y", "z")),  # F1 with {x, y} = 0.8 (speaker None matches any)
        (S1, _words("x", "y")),  # F1 = 1.0: taken first, so {x, y, z} stays unmatched
    ]
    got = ts.match_written(memories, facts)
    assert [(i, j) for i, j, _ in got] == [(0, 0), (1, 1), (2, 3)]
    assert got[1][2] == pytest.approx(2 / 3)
    # another speaker's fact never matches, however equal the words
    assert ts.match_written([(S2, _words("two", "dog"))], [(S1, _words("two", "dog"))]) == []
    # below the threshold: {a, b, c, d} vs {a, e}: P 1/4, R 1/2, F1 = 1/3
    assert ts.match_written([(None, _words("a", "b", "c", "d"))], [(None, _words("a", "e"))]) == []


def test_retrieval_target_ranks_recall_at_k_and_mrr():
    facts = [_words("two", "dog"), _words("pizza", "love"), _words("surf")]
    reply = _words("walk", "two", "dog", "surf")
    # fact 0: 2 shared words, all of it; fact 2: all of it but only 1 word (< 2); fact 1: none
    targets = ts.relevance_targets(facts, reply)
    assert targets == [0]
    items = [_words("pizza"), _words("walk", "two", "dog"), _words("dog"), _words("two")]
    ranks = ts.relevant_ranks(items, [facts[j] for j in targets])
    assert ranks == [2, 3, 4]  # {dog} and {two} hold half of the fact: >= 0.5
    assert ts.recall_at(ranks, 1) == 0.0 and ts.recall_at(ranks, 5) == 1.0
    assert ts.reciprocal_rank(ranks) == 0.5
    assert ts.reciprocal_rank([]) == 0.0


def test_persona_consistency_is_the_best_statement_f1():
    response = _words("love", "pizza", "night")
    statements = [_words("love", "pizza"), _words("night")]
    # {love, pizza}: P 2/3, R 1 -> 0.8; {night}: P 1/3, R 1 -> 0.5
    assert ts.persona_consistency(response, statements) == pytest.approx(0.8)
    assert ts.persona_consistency(response, []) == 0.0


def _pred(pid: str, ep: str, kind: str, **meta) -> Prediction:
    return Prediction(pid, ep, 2, kind, "", "out", "ref" if kind == "response" else None, meta=meta)


def test_writing_precision_recall_f1_are_pooled_over_sessions():
    preds = [
        _pred("a/w", "a", "memory_write", matched=1, written=3, facts=4),
        _pred("b/w", "b", "memory_write", matched=2, written=2, facts=4),
    ]
    _, summary = ts.score_timerag(preds, ["write_precision", "write_recall", "write_f1"])
    m = summary["metrics"]
    assert m["write_precision"]["value"] == pytest.approx(3 / 5)
    assert m["write_recall"]["value"] == pytest.approx(3 / 8)
    assert m["write_f1"]["value"] == pytest.approx(2 * 0.6 * 0.375 / 0.975)
    low, high = m["write_f1"]["ci95"]
    assert low <= m["write_f1"]["value"] <= high


def test_contradiction_rate_counts_judged_responses_and_is_unavailable_offline():
    judged = [
        _pred("a/1", "a", "response", contradiction=True),
        _pred("a/2", "a", "response", contradiction=False),
        _pred("b/1", "b", "response", contradiction=None),  # a pair failed: not judged
    ]
    _, summary = ts.score_timerag(judged, ["contrad_rate"])
    assert summary["metrics"]["contrad_rate"]["value"] == 0.5
    assert summary["metrics"]["contrad_rate"]["n"] == 2
    offline = [_pred("a/1", "a", "response", contradiction=None, nli_unavailable="offline")]
    _, summary = ts.score_timerag(offline, ["contrad_rate"])
    assert "value" not in summary["metrics"]["contrad_rate"]
    assert summary["metrics"]["contrad_rate"]["unavailable"] == "offline"


def test_a_measure_with_nothing_to_score_has_no_value():
    # a run without gold facts (no memory_write records) and without retrieval targets
    preds = [_pred("a/1", "a", "response", retrieval=None)]
    _, summary = ts.score_timerag(preds, ["write_f1", "recall_at_5"])
    for name in ("write_f1", "recall_at_5"):
        assert "value" not in summary["metrics"][name]
        assert summary["metrics"][name]["n"] == 0


def test_latency_counts_only_uncached_calls():
    preds = [
        _pred("a/1", "a", "response", recall_s=0.01, generate_s=0.02),
        _pred("a/2", "a", "response", recall_s=0.0, generate_s=0.0),
    ]
    preds[1].usage["cached"] = True
    _, summary = ts.score_timerag(preds, ["latency_ms"])
    assert summary["metrics"]["latency_ms"]["value"] == pytest.approx(30.0)
    assert summary["metrics"]["latency_ms"]["n"] == 1


# -- the protocol on a hand-made two-session episode ------------------------------------------


def _episode() -> Episode:
    one = [(S1, "Hi there."), (S2, "Hello! What is new?"), (S1, "I have two dogs now.")]
    two = [(S2, "What did you do today?"), (S1, "I walked my two dogs in the park.")]
    sessions = tuple(
        Session(
            f"e/s{i}",
            i,
            T0 + timedelta(days=i),
            tuple(Turn(f"e/s{i}t{j}", spk, text) for j, (spk, text) in enumerate(turns)),
            {"persona": {S1: ["I have two dogs."], S2: []}},
        )
        for i, turns in enumerate((one, two), start=1)
    )
    return Episode("e", "msc", (S1, S2), sessions)


@pytest.fixture(scope="module")
def offline():
    return build_llm({"backend": "extractive"}, cache_path=None)


@pytest.fixture(scope="module")
def embedder():
    return HashingEmbedder(dim=256)


def _run(protocol, method, llm):
    result = protocol.run_episode(_episode(), method, llm)
    return {p.kind: [q for q in result.predictions if q.kind == p.kind] for p in result.predictions}


def test_timerag_writes_the_fact_and_retrieves_it_for_the_reply_that_uses_it(offline, embedder):
    protocol = TimeRAGProtocol(target_sessions=[2])
    got = _run(protocol, TimeRAG(offline, embedder), offline)
    first = got["memory_write"][0]
    assert (first.meta["matched"], first.meta["written"], first.meta["facts"]) == (1, 1, 1)
    (reply,) = got["response"]  # the one turn after the first in session 2
    assert reply.meta["retrieval"] == {"targets": 1, "ranks": [1]}
    assert reply.meta["contradiction"] is None and "offline" in reply.meta["nli_unavailable"]
    _, summary = protocol.score([*got["response"], *got["memory_write"]], ["recall_at_1", "mrr"])
    assert summary["metrics"]["recall_at_1"]["value"] == 1.0
    assert summary["metrics"]["mrr"]["value"] == 1.0


def test_no_memory_recalls_nothing_so_the_target_is_missed(offline, embedder):
    protocol = TimeRAGProtocol(target_sessions=[2])
    got = _run(protocol, NoMemory(offline, embedder), offline)
    (reply,) = got["response"]
    assert reply.meta["retrieval"] == {"targets": 1, "ranks": []}
    assert all(w.meta["written"] == 0 for w in got["memory_write"])


def test_nli_judge_labels_a_response_contradictory_when_a_premise_contradicts(embedder):
    def reply(body):
        text = body["messages"][-1]["content"]
        if text.startswith("Premise:"):
            return "contradiction" if "two dogs" in text else "neutral"
        return "Actually I have no pets."

    with StubServer(reply=reply) as stub:
        llm = build_llm(
            {"backend": "openai", "model": "stub", "base_url": stub.base_url, "max_retries": 0},
            cache_path=None,
        )
        try:
            protocol = TimeRAGProtocol(target_sessions=[2], premises="gold")
            got = _run(protocol, TimeRAG(llm, embedder), llm)
        finally:
            llm.close()
    (response,) = got["response"]
    assert response.meta["premises"] == ["I have two dogs."]
    assert response.meta["nli"] == ["contradiction"]
    _, summary = protocol.score(got["response"], ["contrad_rate"])
    assert summary["metrics"]["contrad_rate"]["value"] == 1.0


def test_persona_chat_dialogue_is_split_so_memory_can_serve_its_second_half():
    turns = tuple(Turn(f"p/t{j}", ("self", "partner")[j % 2], f"turn {j}") for j in range(6))
    persona = {"persona": {"self": ["i love cats."]}}
    episode = Episode(
        "p", "persona_chat", ("partner", "self"), (Session("p/s", 1, T0, turns, persona),)
    )
    split = split_single(episode)
    assert [s.index for s in split.sessions] == [1, 2]
    assert [len(s.turns) for s in split.sessions] == [3, 3]
    assert known_before(split, 2) == {"self": ["i love cats."]}


def test_bad_premises_setting_is_refused():
    with pytest.raises(ValueError, match="premises must be one of"):
        TimeRAGProtocol(premises="retrieved")
