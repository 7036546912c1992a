"""Contract test over every conf/memory/*.yaml: instantiate, replay a tiny episode, no leakage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recallbench.cli.build import build_memory_factory
from recallbench.memory import MemoryMethod
from recallbench.records import MemoryItem, Recall
from recallbench.testing.configs import load_group_config

CONF = Path(__file__).resolve().parents[2] / "conf" / "memory"
CONFIGS = sorted(p for p in CONF.glob("*.yaml") if not p.stem.startswith("_"))  # _: shared parts
# Methods that store the dataset's own memory keep items even when the extractive summary is empty.
MEMORYLESS = {"no_memory", "no_memory_carecall", "no_memory_timerag"}
BASELINE_MODULES = [
    f"recallbench.memory.{m}."
    for m in (
        "no_memory",
        "full_history",
        "session_summaries",
        "all_memories",
        "memory_update",
        "memory_retrieval",
        "gold_memory",
    )
]


def test_every_method_has_a_config():
    stems = {p.stem for p in CONFIGS}
    for name in ("no_memory", "full_history", "session_summaries", "all_memories"):
        assert name in stems
    for name in ("memory_update", "memory_retrieval", "memory_retrieval_update", "gold_memory"):
        assert name in stems


def _instantiate(path: Path, llm, embedder) -> MemoryMethod:
    cfg = load_group_config(path)
    if "summarize_speakers" in cfg and cfg.summarize_speakers is not None:
        cfg.summarize_speakers = ["Alice"]  # the CareCall "user" of the tiny episode
    if path.stem == "graphiti":  # the tiny episode's test vectors fall under Graphiti's cosine
        cfg.fulltext = True  # floor (0.6), so only its BM25 channel finds facts here
    return build_memory_factory(cfg, llm, embedder)()  # as a run builds it


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_contract(path: Path, llm, embedder, make_episode, query_at, future_markers):
    method = _instantiate(path, llm, embedder)
    assert isinstance(method, MemoryMethod)
    episode = make_episode("ep1")
    past_ids = {t.turn_id for s in episode.sessions[:2] for t in s.turns}

    method.reset(episode)
    for session in episode.sessions[:2]:
        method.observe(session)
        snap = method.snapshot()
        assert all(isinstance(item, MemoryItem) for item in snap)
        json.dumps([item.to_dict() for item in snap], allow_nan=False)

    query = query_at(episode, 3, upto=1)
    recall = method.recall(query)
    assert isinstance(recall, Recall)
    assert all(isinstance(item, MemoryItem) for item in recall.items)
    assert set(recall.source_ids()) <= past_ids, "recalled provenance outside sessions 1-2"
    assert bool(recall.items) is (path.stem not in MEMORYLESS)
    json.dumps(recall.to_dict(), allow_nan=False)

    messages = method.prompt(query, recall)
    assert messages and all(set(m) == {"role", "content"} for m in messages)
    content = "\n".join(m["content"] for m in messages)
    assert query.history[-1].text in content
    assert recall.text in content
    for marker in future_markers + episode.qa[0].answers:
        assert marker not in content, f"future text {marker!r} leaked into the prompt"

    reply = llm.chat(
        messages,
        name="response",
        stage="answer",
        offline=lambda: method.offline_response(query, recall),
    )
    assert isinstance(reply.value, str) and reply.value

    # reset: nothing of episode 1 survives into episode 2
    other = make_episode("ep2")
    method.reset(other)
    assert method.snapshot() == []
    fresh = method.recall(query_at(other, 1, upto=1))
    assert all(not sid.startswith("ep1/") for sid in fresh.source_ids())
    assert fresh.items == ()


BASELINES = [
    p for p in CONFIGS if load_group_config(p)._target_.startswith(tuple(BASELINE_MODULES))
]


@pytest.mark.parametrize("path", BASELINES, ids=[p.stem for p in BASELINES])
def test_baselines_refuse_queries_of_another_episode(
    path: Path, llm, embedder, make_episode, query_at
):
    method = _instantiate(path, llm, embedder)
    with pytest.raises(RuntimeError, match="reset"):
        method.recall(query_at(make_episode("ep1"), 1))  # before any reset
    method.reset(make_episode("ep2"))
    with pytest.raises(RuntimeError, match="ep1"):
        method.recall(query_at(make_episode("ep1"), 1))  # a query of another episode
