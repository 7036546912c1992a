"""memory=langmem: LangMem's memory store manager, its chat model and embedder ours."""

from __future__ import annotations

import importlib.util
import json
import sys
import threading
import time
import warnings

import pytest
from langmem.knowledge.extraction import Memory

from recallbench import meter
from recallbench.datasets.locomo import load
from recallbench.embed.hashing import HashingEmbedder
from recallbench.llm import LLM, Cache, Completion
from recallbench.llm.task import ParseError
from recallbench.memory.langmem import LangMemFailed, LangMemMemory
from recallbench.memory.langmem._adapters import (
    offline_tool_calls,
    parse_tool_calls,
    restore_ids,
    stable_ids,
    store_embedder,
)
from recallbench.records import Query
from recallbench.testing.backend import ReplyBackend
from recallbench.testing.embedders import Overlap


@pytest.fixture(scope="module")
def episode(fixtures_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load(fixtures_dir, conversations="conv-2")[0]


class _Twin(ReplyBackend):
    """A model that answers with the offline twin (tools read from the prompt) and keeps every
    request and reply."""

    def __init__(self):
        self.calls: list[tuple[list, str]] = []

    def complete(self, messages, dec):
        user = messages[-1]["content"]
        tools = user.rsplit("You can call these tools (JSON schemas):\n", 1)[1].split("\n\n")[0]
        reply = offline_tool_calls(messages=user, tools=tools)
        self.calls.append((messages, reply))
        return Completion(reply, 10, 5, 0.0)


def _replay(method, episode):
    method.reset(episode)
    for session in episode.sessions:
        method.observe(session)
    return method.snapshot()


def test_every_call_is_routed_and_the_store_after_two_sessions(tmp_path, episode):
    backend = _Twin()
    llm = LLM(backend, Cache(tmp_path / "c.sqlite"))
    method = LangMemMemory(llm, HashingEmbedder())
    items = _replay(method, episode)
    tasks = llm.usage.to_dict()["tasks"]
    assert list(tasks) == ["langmem.extract"]
    assert tasks["langmem.extract"]["calls"] == len(backend.calls) == 4  # one per message
    for _messages, reply in backend.calls:  # tool calls of LangMem's own Memory schema
        for call in json.loads(reply)["tool_calls"]:
            assert call["name"] == "Memory"
            Memory.model_validate(call["args"])
    assert "You are a long-term memory manager" in backend.calls[0][0][-1]["content"]
    texts = [i.text for i in items]
    assert (
        texts[1]
        == "2023-06-01 20:05:00 | Dev: Great Cleo! I moved to Oslo for a new job at a bakery."
    )
    assert items[1].source_ids == ("locomo/conv-2/D1:2",)
    assert items[2].created.date().isoformat() == "2023-06-15"
    assert [i.attrs["speaker"] for i in items] == ["Cleo", "Dev", "Cleo", "Dev"]
    recall = method.recall(Query(episode.episode_id, 3, (), "Cleo", None, "Where is Dev's job?"))
    assert recall.text.startswith("Memories for user Cleo:")
    assert "Memories for user Dev:" in recall.text
    assert len(recall.items) == 4


def test_a_rerun_sends_nothing_although_langmem_names_things_by_uuid4(tmp_path, episode):
    first = _Twin()
    items = _replay(
        LangMemMemory(LLM(first, Cache(tmp_path / "c.sqlite")), HashingEmbedder()), episode
    )
    # the second message of a speaker shows the model the first memory: ids are stable tokens
    assert "id-" in first.calls[2][0][-1]["content"]
    again = _Twin()
    llm = LLM(again, Cache(tmp_path / "c.sqlite"))
    items_again = _replay(LangMemMemory(llm, HashingEmbedder()), episode)
    assert again.calls == []
    assert [i.text for i in items_again] == [i.text for i in items]


def test_ids_round_trip_and_replies_are_checked():
    ids: dict[str, str] = {}
    key = "0bff7f8d-7bba-5164-91af-dd2920215362"
    text = stable_ids(f"<session_{key}> doc {key.replace('-', '')}", ids)
    assert text == "<session_id-0> doc id-1"
    assert restore_ids({"json_doc_id": "id-1", "x": ["id-0"]}, ids) == {
        "json_doc_id": key.replace("-", ""),
        "x": [key],
    }
    assert json.loads(parse_tool_calls('```json\n{"tool_calls": []}\n```')) == {"tool_calls": []}
    with pytest.raises(ParseError):
        parse_tool_calls('{"tool_calls": [{"name": "Memory"}]}')


def test_a_store_failure_is_one_line_naming_episode_and_session(tmp_path, episode, monkeypatch):
    method = LangMemMemory(LLM(_Twin(), Cache(tmp_path / "c.sqlite")), HashingEmbedder())
    method.reset(episode)
    method.observe(episode.sessions[0])

    def broken(*args, **kwargs):
        raise RuntimeError("store down\nsecond line")

    monkeypatch.setattr(type(method._store), "search", broken)  # the store is slotted
    with pytest.raises(LangMemFailed) as caught:
        method.observe(episode.sessions[1])
    assert "\n" not in str(caught.value)
    assert "episode locomo/conv-2 session 2" in str(caught.value)


def test_a_missing_package_is_one_line_saying_what_to_install(monkeypatch):
    import recallbench.memory.langmem._langmem as module

    monkeypatch.setitem(sys.modules, "langmem", None)  # as if not installed
    spec = importlib.util.spec_from_file_location("langmem_copy", module.__file__)
    with pytest.raises(ImportError) as caught:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    assert "\n" not in str(caught.value)
    assert "pip install 'langmem==0.0.30'" in str(caught.value)


class _SlowEmbedder(HashingEmbedder):
    """The hashing embedder, taking 30 ms per model call and recording how many calls overlap."""

    def __init__(self):
        super().__init__(dim=16)
        self.overlap = Overlap()

    def _embed_batch(self, texts):
        with self.overlap.call():
            return super()._embed_batch(texts)


def test_the_store_embedder_times_no_thread_waiting_for_another():
    # LangGraph embeds from several threads at once; the meter adds each thread's encode time,
    # so waits inside encode once summed to more embedding seconds than the run's wall
    embedder = _SlowEmbedder()
    embed = store_embedder(embedder)
    before = meter.snapshot()["seconds"].get("embeddings", 0.0)
    started = time.perf_counter()
    threads = [threading.Thread(target=embed, args=([f"text {i}"],)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    timed = meter.snapshot()["seconds"].get("embeddings", 0.0) - before
    assert embedder.overlap.most == 1  # one call in encode at a time
    assert 6 * 0.03 <= timed <= wall  # every model call timed once, no wait counted
