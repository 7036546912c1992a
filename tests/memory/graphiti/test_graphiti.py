"""memory=graphiti: graphiti-core on embedded Kuzu, every call through recallbench's LLM layer."""

from __future__ import annotations

import importlib.util
import json
import sys
import warnings

import pytest
from graphiti_core.prompts.dedupe_edges import EdgeDuplicate
from graphiti_core.prompts.dedupe_nodes import NodeResolutions
from graphiti_core.prompts.extract_edges import BatchEdgeTimestamps, EdgeTimestamps, ExtractedEdges
from graphiti_core.prompts.extract_nodes import ExtractedEntities, SummarizedEntities
from graphiti_core.prompts.summarize_nodes import Summary, SummaryDescription

from recallbench.datasets.locomo import load
from recallbench.embed.hashing import HashingEmbedder
from recallbench.llm import LLM, Cache, Completion
from recallbench.memory.graphiti import GraphitiFailed, GraphitiMemory
from recallbench.memory.graphiti._twin import offline_reply
from recallbench.records import Query
from recallbench.testing.backend import ReplyBackend

MODELS = {
    m.__name__: m
    for m in (
        ExtractedEntities,
        ExtractedEdges,
        EdgeTimestamps,
        BatchEdgeTimestamps,
        NodeResolutions,
        EdgeDuplicate,
        SummarizedEntities,
        Summary,
        SummaryDescription,
    )
}


@pytest.fixture(scope="module")
def episode(fixtures_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load(fixtures_dir, conversations="conv-2")[0]


class _Twin(ReplyBackend):
    """A model that answers with the offline twin and keeps every request and reply."""

    def __init__(self):
        self.calls: list[tuple[list, str]] = []

    def complete(self, messages, dec):
        reply = offline_reply(messages[-1]["content"])
        self.calls.append((messages, reply))
        return Completion(reply, 10, 5, 0.0)


class _Counting(HashingEmbedder):
    """The hashing embedder, counting the texts it is asked to embed."""

    def __init__(self):
        super().__init__()
        self.texts = 0

    def encode(self, texts):
        self.texts += len(texts)
        return super().encode(texts)


def _replay(method, episode, sessions=None):
    method.reset(episode)
    for session in episode.sessions[:sessions]:
        method.observe(session)
    return method.snapshot()


def _schema_title(messages) -> str:
    marker = "Respond with a JSON object in the following format:\n\n"
    return json.loads(messages[-1]["content"].split(marker)[-1])["title"]


def test_every_call_is_routed_and_the_twin_fits_graphitis_models(tmp_path, episode):
    backend, embedder = _Twin(), _Counting()
    llm = LLM(backend, Cache(tmp_path / "c.sqlite"))
    items = _replay(GraphitiMemory(llm, embedder), episode)
    tasks = llm.usage.to_dict()["tasks"]
    # every request the backend saw was a counted call of a graphiti.<prompt> task
    assert sum(t["calls"] for t in tasks.values()) == len(backend.calls) > 0
    assert all(name.startswith("graphiti.") for name in tasks)
    assert tasks["graphiti.extract_nodes.extract_message"]["calls"] == 4  # one per turn
    assert tasks["graphiti.extract_edges.edge"]["calls"] == 4
    assert embedder.texts > 0  # Graphiti's embeddings came from the run's embedder
    for messages, reply in backend.calls:  # the twin's replies fit graphiti-core's own models
        MODELS[_schema_title(messages)].model_validate_json(reply)
    # the graph after two sessions: facts dated by their session, credited to their turn
    facts = {i.text: i for i in items if i.kind == "fact"}
    oslo = facts["Dev: I moved to Oslo for a new job at a bakery."]
    assert oslo.source_ids == ("locomo/conv-2/D1:2",)
    assert oslo.created is not None and oslo.created.date().isoformat() == "2023-06-01"
    berlin = facts["Cleo: I ran the Berlin marathon yesterday in four hours."]
    assert berlin.created.date().isoformat() == "2023-06-15"
    names = {i.attrs["name"] for i in items if i.kind == "profile"}
    assert {"Cleo", "Dev", "Oslo", "Berlin"} <= names
    assert len({i.item_id for i in items}) == len(items)


def test_recall_is_zeps_context_and_a_rerun_sends_nothing(tmp_path, episode):
    llm = LLM(_Twin(), Cache(tmp_path / "c.sqlite"))
    method = GraphitiMemory(llm, HashingEmbedder(), fulltext=True)  # Zep's BM25 channel on
    items = _replay(method, episode)
    query = Query(episode.episode_id, 3, (), "Cleo", None, "Where did Dev move for a job?")
    recall = method.recall(query)
    assert "<FACTS>" in recall.text and "<ENTITIES>" in recall.text
    assert "  - Dev: I moved to Oslo for a new job at a bakery. (2023-06-01" in recall.text
    assert recall.items[0].kind == "fact" and recall.items[-1].kind == "profile"
    again = _Twin()
    llm_again = LLM(again, Cache(tmp_path / "c.sqlite"))
    items_again = _replay(GraphitiMemory(llm_again, HashingEmbedder(), fulltext=True), episode)
    assert again.calls == []  # every call answered by the cache: the prompts are deterministic
    assert [i.text for i in items_again] == [i.text for i in items]
    assert [i.item_id for i in items_again] == [i.item_id for i in items]


def test_a_kuzu_failure_is_one_line_and_the_rerun_resumes_from_the_cache(
    tmp_path, episode, monkeypatch
):
    first = _Twin()
    method = GraphitiMemory(LLM(first, Cache(tmp_path / "c.sqlite")), HashingEmbedder())
    method.reset(episode)
    method.observe(episode.sessions[0])
    sent_before = len(first.calls)

    async def broken(*args, **kwargs):
        raise RuntimeError("IO exception: disk full\nsecond line")

    monkeypatch.setattr(method._driver, "execute_query", broken)
    with pytest.raises(GraphitiFailed) as caught:
        method.observe(episode.sessions[1])
    message = str(caught.value)
    assert "\n" not in message
    assert "episode locomo/conv-2 session 2" in message and "disk full" in message
    # a rerun (resume) answers the first session from the cache: nothing was lost
    second = _Twin()
    llm = LLM(second, Cache(tmp_path / "c.sqlite"))
    _replay(GraphitiMemory(llm, HashingEmbedder()), episode)
    tasks = llm.usage.to_dict()["tasks"]
    assert sum(t["cached_calls"] for t in tasks.values()) >= sent_before > 0
    assert len(second.calls) == sum(t["calls"] - t["cached_calls"] for t in tasks.values())


def test_a_missing_package_is_one_line_saying_what_to_install(monkeypatch):
    import recallbench.memory.graphiti._graphiti as module

    monkeypatch.setitem(sys.modules, "graphiti_core", None)  # as if not installed
    spec = importlib.util.spec_from_file_location("graphiti_copy", module.__file__)
    with pytest.raises(ImportError) as caught:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    message = str(caught.value)
    assert "\n" not in message
    assert "pip install 'graphiti-core==0.31.2' 'kuzu==0.11.3'" in message


def test_a_fulltext_search_past_kuzus_timeout_or_failing_counts_as_no_hits(caplog):
    import asyncio

    import kuzu

    from recallbench import meter
    from recallbench.memory.graphiti._kuzu import _fulltext_misses_on_timeout

    # what Kuzu raises at its timeout (the wrapper's contract with it)
    db = kuzu.Database(":memory:", buffer_pool_size=64 * 2**20)
    conn = kuzu.Connection(db)
    conn.execute("CREATE NODE TABLE T(id INT64, PRIMARY KEY(id))")
    conn.execute("UNWIND range(1, 3000) AS i CREATE (:T {id: i})")
    conn.set_query_timeout(1)
    with pytest.raises(RuntimeError, match="Interrupted"):
        conn.execute("MATCH (a:T), (b:T) WHERE a.id < b.id RETURN count(*)")

    async def interrupted(cypher_query_, **kwargs):
        raise RuntimeError("Interrupted.")

    async def broken(cypher_query_, **kwargs):
        raise RuntimeError("IO exception: disk full")

    fts = "CALL QUERY_FTS_INDEX('RelatesToNode_', 'edge_name_and_fact', $query, TOP := $limit)"
    before = meter.snapshot()
    loop = asyncio.new_event_loop()
    try:
        rows = loop.run_until_complete(
            _fulltext_misses_on_timeout(interrupted, 60)(fts, query="a whole message", limit=20)
        )
        assert rows == ([], None, None)
        assert "counts as no hits (ran past 60s" in caplog.text
        rows = loop.run_until_complete(_fulltext_misses_on_timeout(broken, 60)(fts, query="q"))
        assert rows == ([], None, None) and "disk full" in caplog.text
        assert meter.delta(before)["graphiti"]["fulltext_failures"] == 2
        with pytest.raises(RuntimeError, match="Interrupted"):  # not a full-text search
            loop.run_until_complete(
                _fulltext_misses_on_timeout(interrupted, 60)("MATCH (n) RETURN n")
            )
        with pytest.raises(RuntimeError, match="disk full"):  # not a full-text search
            loop.run_until_complete(_fulltext_misses_on_timeout(broken, 60)("MATCH (n) RETURN n"))
    finally:
        loop.close()


def test_without_fulltext_no_full_text_search_reaches_kuzu(tmp_path, episode):
    from recallbench import meter

    before = meter.snapshot()
    method = GraphitiMemory(LLM(_Twin(), Cache(tmp_path / "c.sqlite")), HashingEmbedder())
    assert method.fulltext is False  # the default (Kuzu 0.11.3's index breaks on LoCoMo)
    items = _replay(method, episode)
    assert {i.kind for i in items} >= {"fact", "profile"}  # the graph is written as before
    method.recall(Query(episode.episode_id, 3, (), "Cleo", None, "Where did Dev move?"))
    assert meter.delta(before)["graphiti"]["fulltext_skipped"] > 0
    indexes = method._run(method._driver.execute_query("CALL SHOW_INDEXES() RETURN *"))[0]
    assert indexes == []  # no full-text index is built


def test_many_graphs_open_at_once_fit_in_the_address_space():
    # graphiti-core leaves each driver to the garbage collector, so graphs of finished episodes
    # linger; with Kuzu's 8 TB reservation per database the 14th open graph failed to map
    # (the LongMemEval oracle run stopped after 69 questions)
    from recallbench.memory.graphiti._kuzu import bounded_kuzu

    drivers = [bounded_kuzu(":memory:", 16, fulltext=False) for _ in range(24)]
    assert len({id(d.db) for d in drivers}) == 24


def test_a_graph_kuzu_cannot_open_is_one_line_naming_the_episode(tmp_path, episode, monkeypatch):
    import recallbench.memory.graphiti._graphiti as graphiti_module

    def no_room(*args, **kwargs):
        raise RuntimeError("Buffer manager exception: Mmap for size 8796093022208 failed.\nmore")

    monkeypatch.setattr(graphiti_module, "bounded_kuzu", no_room)
    method = GraphitiMemory(LLM(_Twin(), Cache(tmp_path / "c.sqlite")), HashingEmbedder())
    with pytest.raises(GraphitiFailed) as caught:
        method.reset(episode)
    message = str(caught.value)
    assert "\n" not in message and "episode locomo/conv-2" in message and "Mmap" in message


def test_each_episodes_graph_is_freed_when_the_next_starts(tmp_path, episode):
    # graphiti-core's objects hold the Kuzu database in reference cycles: without a collection
    # at reset, every question's graph stayed in memory (an oracle run grew to 8.7 GB)
    import gc
    import weakref

    method = GraphitiMemory(LLM(_Twin(), Cache(tmp_path / "c.sqlite")), HashingEmbedder())
    graphs = []
    gc.disable()  # only the method's own collection may free them
    try:
        for _ in range(3):
            method.reset(episode)
            method.observe(episode.sessions[0])
            graphs.append(weakref.ref(method._driver.db))
        method.close()
        assert [g() for g in graphs] == [None, None, None]
    finally:
        gc.enable()
