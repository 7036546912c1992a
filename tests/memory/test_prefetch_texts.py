"""MemoryMethod.prefetch_texts: what a method says it will embed is what it then embeds.

Each case replays a fixture episode through its protocol with an embedder that records the texts
it sends to the model (its cache misses). After ``prefetch_episode`` the only misses left are
texts the episode's data does not fix (the questions and retrieval queries, model-written
summaries); the prefetched texts are embedded anyway without prefetch (none is extra) unless the
method says it returns a superset; and the predictions are the same with and without prefetch.
The response protocols' retrieval queries are fixed by the data too (``fixed_queries``): the
method's ``query_texts`` of them reach the model in one call right after, never during the
replay.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import pytest
from omegaconf import OmegaConf

from recallbench import CONF_DIR
from recallbench.cli.build import build_memory_factory, build_protocol
from recallbench.datasets import longmemeval, lufy
from recallbench.llm import build_llm
from recallbench.memory import MemoryMethod
from recallbench.memory._base import query_text
from recallbench.memory.blocks.replay import reply_queries
from recallbench.memory.memory_retrieval import MemoryRetrieval
from recallbench.protocols.qa import QAProtocol
from recallbench.records import Episode, Prediction, Session, Turn
from recallbench.testing.configs import load_group_config
from recallbench.testing.embedders import RecordingEmbedder


@dataclass
class Replay:
    """One replay: what prefetch sent, what was sent after it, the method and predictions."""

    prefetched: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)
    after_calls: list[list[str]] = field(default_factory=list)
    method: MemoryMethod | None = None
    predictions: list[Prediction] = field(default_factory=list)


def _replay(protocol, episode: Episode, make, *, prefetch: bool = True) -> Replay:
    embedder, out = RecordingEmbedder(), Replay()
    method = out.method = make(embedder)
    if not prefetch:  # the texts are embedded as the sessions come, as before the hook
        method.prefetch_texts = lambda episode: []  # type: ignore[method-assign]
        method.query_texts = lambda queries: []  # type: ignore[method-assign]
    hook = method.prefetch_episode
    calls_before: list[int] = []

    def prefetch_episode(ep: Episode) -> None:
        hook(ep)
        out.prefetched = list(embedder.sent)
        calls_before.append(len(embedder.calls))

    method.prefetch_episode = prefetch_episode  # type: ignore[method-assign]
    llm = build_llm({"backend": "extractive"}, cache_path=None)
    out.predictions = protocol.run_episode(episode, method, llm).predictions
    out.after = embedder.sent[len(out.prefetched) :]
    out.after_calls = embedder.calls[calls_before[0] :]
    return out


def _timeless(value: object) -> object:
    """``value`` without its wall-clock seconds (keys ``*_s``, ``latency_ms``), at any depth."""
    if isinstance(value, dict):
        return {
            k: _timeless(v) for k, v in value.items() if not (k.endswith("_s") or k == "latency_ms")
        }
    return value


def _same(a: list[Prediction], b: list[Prediction]) -> None:
    """Equal predictions but the wall-clock seconds they record."""
    assert [_timeless(vars(p)) for p in a] == [_timeless(vars(p)) for p in b]


def _memory(name: str):
    node = load_group_config(CONF_DIR / "memory" / f"{name}.yaml")
    llm = build_llm({"backend": "extractive"}, cache_path=None)
    return lambda embedder: build_memory_factory(node, llm, embedder)()


JUDGES = {
    "lexical": {"name": "lexical"},
    "longmemeval": {"_target_": "recallbench.judges.longmemeval.LongMemEvalJudge"}
    | {"name": "longmemeval", "generator": None},
}


def _protocol(name: str, judge: str | None, **overrides: object):
    node = OmegaConf.to_container(OmegaConf.load(CONF_DIR / "protocol" / f"{name}.yaml"))
    assert isinstance(node, dict)
    node.update(overrides)
    if judge:
        node["judge"] = JUDGES[judge]
    return build_protocol(node, 0, build_llm({"backend": "extractive"}, cache_path=None), None)


@pytest.mark.parametrize("name", ["flat_retrieval", "flat_retrieval_userfact"])
def test_flat_index_prefetches_exactly_its_keys(fixtures_dir, name):
    protocol = _protocol("longmemeval_qa", "longmemeval")
    for episode in longmemeval.load(fixtures_dir, "s"):
        got = _replay(protocol, episode, _memory(name))
        questions = {qa.question for qa in episode.qa}
        assert got.prefetched and set(got.after) <= questions  # only the question is new
        assert set(got.prefetched) == set(got.method._keys)  # every key written, nothing else
        before = _replay(protocol, episode, _memory(name), prefetch=False)
        assert sorted(before.prefetched + before.after) == sorted(got.prefetched + got.after)
        _same(got.predictions, before.predictions)


@pytest.mark.parametrize("name", ["naive_rag", "memorybank"])
def test_lufy_family_prefetches_every_pair_and_query(fixtures_dir, name):
    protocol = _protocol("qa_lufy", "lexical")
    assert isinstance(protocol, QAProtocol)
    episode = lufy.load(fixtures_dir)[0]
    got = _replay(protocol, episode, _memory(name))
    pairs = set()  # each user turn after the bot's turn before it: the pairs LUFY's store writes
    for session in episode.sessions:
        for i, turn in enumerate(session.turns):
            if turn.speaker != "Luke":
                before_it = session.turns[i - 1 : i] if i else ()
                pairs.add("\n".join(f"{t.speaker}: {t.text}" for t in (*before_it, turn)))
    assert pairs and pairs <= set(got.prefetched)
    fixed = set(got.prefetched)
    assert not set(got.after) & fixed  # summaries and profile facts only: model output
    before = _replay(protocol, episode, _memory(name), prefetch=False)
    extra = set(got.prefetched) - set(before.prefetched + before.after)
    users = {t.text for s in episode.sessions for t in s.turns if t.speaker != "Luke"}
    assert extra <= users  # a user turn no reply followed retrieves nothing: the only superset
    _same(got.predictions, before.predictions)


TIMERAG_SESSIONS = (
    [("Ann", "I live in Boston."), ("Ben", "I work as a nurse."), ("Ann", "I like jazz music.")],
    [
        ("Ben", "Do you still live in Boston?"),
        ("Ann", "I live in Lisbon now."),
        ("Ben", "I like jazz music too."),
        ("Ann", "I love hiking in the mountains."),
    ],
    [
        ("Ann", "Forget that I live in Lisbon."),
        ("Ben", "I have a dog named Rex."),
        ("Ann", "My favorite food is pizza."),
        ("Ben", "I like jazz music."),
    ],
)


def _tiny_episode() -> Episode:
    return Episode(
        "e",
        "tiny",
        ("Ann", "Ben"),
        tuple(
            Session(
                f"e/s{i}",
                i,
                datetime(2024, 1, i),
                tuple(Turn(f"e/s{i}t{j}", spk, text) for j, (spk, text) in enumerate(turns)),
            )
            for i, turns in enumerate(TIMERAG_SESSIONS, start=1)
        ),
    )


def test_timerag_prefetches_its_candidates_values():
    protocol = _protocol("response_timerag", None)
    episode = _tiny_episode()
    got = _replay(protocol, episode, _memory("timerag"))
    viewed = protocol.view(episode)
    queries = {
        query_text(query, got.method.context_turns)
        for session in viewed.sessions
        if session.index in protocol.targets(viewed)
        for _, query in reply_queries(viewed, session, protocol._responds)
    }
    assert got.prefetched and set(got.after) <= queries  # the records' values were all there
    assert set(got.method.query_texts(protocol.fixed_queries(episode))) == queries
    first, *rest = got.after_calls  # the queries in one call right after, nothing later
    assert set(first) == queries - set(got.prefetched) and not rest
    before = _replay(protocol, episode, _memory("timerag"), prefetch=False)
    embedded = set(before.prefetched + before.after) - queries
    assert embedded and embedded <= set(got.prefetched)  # a superset: the gate drops some
    _same(got.predictions, before.predictions)


@pytest.mark.parametrize(
    "name, protocol_name",
    [
        ("memory_retrieval", "response_theanine"),
        ("theanine", "response_theanine"),
        ("timerag_bm25", "response_timerag"),
        ("memochat", "response_theanine"),
    ],
)
def test_response_queries_reach_the_model_once_before_the_replay(name, protocol_name):
    """A dense retriever's queries (the last turns, or all of the session for THEANINE) in one
    call after ``prefetch_episode``, none during the replay; a method whose embedder never reads
    its query (BM25, an LLM selecting) embeds none; predictions as without any prefetch."""
    protocol = _protocol(protocol_name, None, target_sessions=[2, 3])
    episode = _tiny_episode()
    got = _replay(protocol, episode, _memory(name))
    method = got.method
    fixed = protocol.fixed_queries(episode)
    assert len(fixed) == 6  # every turn after the first of sessions 2 and 3
    texts = set(method.query_texts(fixed))
    dense = name in ("memory_retrieval", "theanine")
    assert texts == ({query_text(q, method.context_turns) for q in fixed} if dense else set())
    if dense:
        assert set(got.after_calls[0]) == texts - set(got.prefetched)
    assert not texts & {t for call in got.after_calls[dense:] for t in call}
    before = _replay(protocol, episode, _memory(name), prefetch=False)
    _same(got.predictions, before.predictions)


def test_memory_retrieval_prefetches_the_gold_memory(make_episode, llm):
    protocol = _protocol("qa_lufy", "lexical", replay_turns=False)  # recall for questions only
    episode = make_episode("gold")

    def make(embedder):
        return MemoryRetrieval(llm, embedder, source="gold", gold_key="summary", k=2)

    got = _replay(protocol, episode, make)
    assert got.prefetched and set(got.after) <= {qa.question for qa in episode.qa}
    before = _replay(protocol, episode, make, prefetch=False)
    _same(got.predictions, before.predictions)
    written = MemoryRetrieval(llm, RecordingEmbedder())  # a memory the LLM writes: none fixed
    assert list(written.prefetch_texts(episode)) == []
