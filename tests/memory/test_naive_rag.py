"""Naive RAG (LUFY Table 4): cosine retrieval, no forgetting, 100% retention (Table 3)."""

from __future__ import annotations

from lufy_scenarios import HARVARD, SESSION_1, SESSION_2, make_episode, pair_id, probe, replay

from recallbench.memory.naive_rag import NaiveRAG


def test_keeps_everything(llm, embedder):
    episode = make_episode([SESSION_1, SESSION_2, SESSION_1])
    method = NaiveRAG(llm, embedder, threshold=0.5)
    method.reset(episode)
    created = 0
    for session, exchanges in zip(episode.sessions, (SESSION_1, SESSION_2, SESSION_1), strict=True):
        method.observe(session)
        created += len(exchanges) + 1  # pairs + the session summary
        assert method.retention() == {"created": created, "retained": created}  # Table 3: 100%
        assert all(i.attrs["retained"] for i in method.snapshot())


def test_forgetting_cannot_be_switched_on(llm, embedder):
    method = NaiveRAG(llm, embedder, forgetting=True)
    assert method.forgetting is False


def test_cosine_only_ranking(llm, embedder):
    episode = make_episode([SESSION_1, SESSION_2])
    method = NaiveRAG(llm, embedder, threshold=0.2)
    replay(method, episode)
    recall = method.recall(probe(episode, "Zoe found out she got into which university?", 2))
    assert recall.info["r1"] == pair_id(episode, 2, HARVARD)
    assert recall.info["score"] == recall.info["cosine"]  # no importance term (Table 4)
