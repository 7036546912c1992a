"""``HasQueryEmbedder``: the default ``prefetch`` embeds a session's queries in one batch."""

from __future__ import annotations

from lufy_scenarios import BOT, SESSION_1, SESSION_2, make_episode

from recallbench.embed import HashingEmbedder
from recallbench.memory import HasQueryEmbedder
from recallbench.memory.full_history import FullHistory
from recallbench.memory.memory_retrieval import MemoryRetrieval
from recallbench.records import Query


def test_a_method_with_a_query_embedder_prefetches_its_queries_in_one_batch(llm):
    assert not isinstance(FullHistory(llm, HashingEmbedder(dim=64)), HasQueryEmbedder)
    episode = make_episode([SESSION_1, SESSION_2])
    session = episode.sessions[1]
    queries = [
        Query(episode.episode_id, session.index, session.turns[:j], BOT, session.start)
        for j in range(1, len(session.turns))
    ]
    recalls, batches = [], []
    for prefetch in (False, True):
        emb = HashingEmbedder(dim=64)
        method = MemoryRetrieval(llm, emb, k=2)
        assert isinstance(method, HasQueryEmbedder)
        method.reset(episode)
        method.observe(episode.sessions[0])
        if prefetch:
            method.prefetch(queries)
        recalls.append([method.recall(q) for q in queries])
        batches.append(emb.cache_info.batches)
    assert recalls[0] == recalls[1]
    # without: one batch per recall's query (and the store's); with: the queries' one batch
    assert batches[1] < batches[0] and batches[0] >= len(queries)


def test_prefetch_does_nothing_without_a_query_embedder(llm):
    emb = HashingEmbedder(dim=64)
    method = FullHistory(llm, emb)
    episode = make_episode([SESSION_1])
    method.reset(episode)
    session = episode.sessions[0]
    method.prefetch([Query(episode.episode_id, 1, session.turns[:1], BOT, session.start)])
    assert emb.cache_info.batches == 0
