"""memory=mem0: mem0ai in-process, its calls through recallbench's LLM layer and cache."""

from __future__ import annotations

import dataclasses
import json
import warnings

import pytest

from recallbench.datasets.locomo import load
from recallbench.embed.hashing import HashingEmbedder
from recallbench.llm import LLM, Cache, Completion, build_llm
from recallbench.llm.task import ParseError
from recallbench.memory.mem0 import EXTRACT_TASK, Mem0Memory
from recallbench.memory.mem0._adapters import offline_extraction, parse_extraction
from recallbench.records import Query
from recallbench.testing.backend import ReplyBackend


@pytest.fixture(scope="module")
def episode(fixtures_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load(fixtures_dir, conversations="conv-2")[0]


class _Script(ReplyBackend):
    """A model that states one fact per call and counts the calls it receives."""

    name, local, offline, is_async, model, context_length = "script", True, False, False, "s", 99999
    endpoint = None

    def __init__(self):
        self.calls = []

    def complete(self, messages, dec):
        self.calls.append(messages)
        fact = {"id": "0", "text": f"fact {len(self.calls)}", "attributed_to": "user"}
        reply = json.dumps({"memory": [fact | {"linked_memory_ids": []}]})
        return Completion(reply, 10, 5, 0.0)

    def count_tokens(self, text):
        return len(text.split())

    def close(self):
        pass


def _replay(method, episode):
    method.reset(episode)
    for session in episode.sessions:
        method.observe(session)
    return method.snapshot()


def test_calls_go_through_the_cache_and_a_rerun_sends_nothing(tmp_path, episode):
    first = _Script()
    items = _replay(
        Mem0Memory(LLM(first, Cache(tmp_path / "c.sqlite")), HashingEmbedder()), episode
    )
    # 2 sessions x 2 turns, batches of 2, one scope per speaker: 4 extraction calls
    assert len(first.calls) == 4
    system, user = first.calls[0]
    assert system["role"] == "system" and "## New Messages" in user["content"]
    assert "## Observation Date\n2023-06-01" in user["content"]  # the session's date, not today
    assert "## Current Date\n2023-06-01" in user["content"]
    assert "user: Cleo: Dev, I finally finished" in user["content"]  # Mem0's LoCoMo recipe
    assert [i.item_id for i in items] == [f"locomo/conv-2/mem0/{k}" for k in range(4)]
    assert items[0].source_ids == ("locomo/conv-2/D1:1", "locomo/conv-2/D1:2")
    again = _Script()
    llm = LLM(again, Cache(tmp_path / "c.sqlite"))
    items_again = _replay(Mem0Memory(llm, HashingEmbedder()), episode)
    assert again.calls == []  # every call answered by the cache
    assert [i.text for i in items_again] == [i.text for i in items]
    assert llm.usage.to_dict()["tasks"]["mem0.extract"]["cached_calls"] == 4


def test_offline_twin_and_recall_with_sources(episode):
    llm = build_llm({"backend": "extractive"})
    method = Mem0Memory(llm, HashingEmbedder(), threshold=0.0)  # hashed vectors: low cosines
    items = _replay(method, episode)
    texts = [i.text.split(": ", 1)[1] for i in items]
    # each speaker's own sentences with 3+ content words, in its own scope
    assert "Cleo: I ran the Berlin marathon yesterday in four hours." in texts
    assert {i.attrs["speaker"] for i in items} == {"Cleo", "Dev"}
    query = Query(episode.episode_id, 2, (), "Cleo", None, "Where did Dev move?")
    recall = method.recall(query)
    assert "Memories for user Cleo:" in recall.text and "Memories for user Dev:" in recall.text
    assert recall.items and all(i.source_ids for i in recall.items)
    assert method.snapshot() == items  # searching does not change the store


def test_extraction_parser_and_offline_twin():
    assert json.loads(parse_extraction('```json\n{"memory": []}\n```')) == {"memory": []}
    for bad in ("no json", '{"facts": []}', "[1, 2]"):
        with pytest.raises(ParseError):
            parse_extraction(bad)
    user = (
        "## New Messages\nuser: Ada: I adopted a beagle named Pixel.\nassistant: Ben: Nice dog!\n"
    )
    out = json.loads(offline_extraction(user + "\n## Observation Date\n2023-01-01"))
    assert [m["text"] for m in out["memory"]] == ["Ada: I adopted a beagle named Pixel."]
    assert EXTRACT_TASK.fallback == '{"memory": []}' and EXTRACT_TASK.stage == "memory"


def test_telemetry_is_off_and_the_version_is_recorded():
    import mem0.memory.main as main
    import mem0.memory.telemetry as telemetry

    from recallbench.run.provenance import package_versions

    assert main.MEM0_TELEMETRY is False and telemetry.MEM0_TELEMETRY is False
    assert package_versions()["mem0ai"].startswith("2.2.")  # run.json "versions"


def test_an_episode_or_speaker_with_spaces_is_its_own_scope(episode):
    # LUFY's "Naive RAG" logs: mem0 refuses a user_id with whitespace (the EPISODES=10 matrix
    # cell failed on it); the scope is percent-encoded, so "a b" and "a_b" stay apart
    spaced = dataclasses.replace(episode, episode_id="lufy/Naive RAG/u 1")
    method = Mem0Memory(build_llm({"backend": "extractive"}), HashingEmbedder(), threshold=0.0)
    items = _replay(method, spaced)
    assert items and {i.attrs["speaker"] for i in items} == {"Cleo", "Dev"}
    assert method._scope("Dev") == "lufy/Naive%20RAG/u%201/Dev"
    assert method._scope("a b") != method._scope("a_b")
    query = Query(spaced.episode_id, 2, (), "Cleo", None, "Where did Dev move?")
    assert method.recall(query).items
