"""Responses of one session generated side by side equal a turn-by-turn replay (issue 10)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from recallbench.datasets import msc
from recallbench.embed import HashingEmbedder
from recallbench.llm import build_llm
from recallbench.memory.memory_retrieval import MemoryRetrieval
from recallbench.protocols.response import ResponseProtocol
from recallbench.testing.stub import StubServer

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"


@pytest.fixture(scope="module")
def episode():
    return msc.load(FIXTURES, split="test")[0]


def _replay(stub: StubServer, episode, batch: bool):
    llm = build_llm(
        {"backend": "openai", "model": "stub", "base_url": stub.base_url, "concurrency": 8},
        cache_path=None,
    )
    embedder = HashingEmbedder(dim=256)
    stub.reset_stats()
    try:
        protocol = ResponseProtocol(target_sessions=[2, 3], batch_turns=batch)
        result = protocol.run_episode(episode, MemoryRetrieval(llm, embedder, k=3), llm)
    finally:
        llm.close()
    keep = ("pred_id", "output", "reference", "recalled", "prompt_hash", "failure")
    return [
        {k: getattr(p, k) for k in keep} | {"recall": p.meta["recall_text"]}
        for p in result.predictions
        if p.kind == "response"
    ], stub.max_in_flight


def _release_when_held(stub: StubServer, n: int) -> threading.Thread:
    """Hold every request until ``n`` wait together (or 30 s pass), then let all through: a
    client that sends calls side by side shows it whatever the machine's load."""

    def release() -> None:
        deadline = time.monotonic() + 30
        while stub.held < n and time.monotonic() < deadline:
            time.sleep(0.01)
        stub.release()

    stub.hold_after(0)
    thread = threading.Thread(target=release, daemon=True)
    thread.start()
    return thread


def test_batched_turns_equal_turn_by_turn_and_overlap(episode):
    with StubServer(latency_s=0.01) as stub:
        serial, serial_peak = _replay(stub, episode, batch=False)
        waiter = _release_when_held(stub, 2)
        batched, batched_peak = _replay(stub, episode, batch=True)
        waiter.join()
    assert len(serial) >= 4
    assert batched == serial  # same replies, recalls and order
    assert serial_peak == 1
    assert batched_peak > 1  # calls of one session were in flight together


def test_in_process_backends_always_go_turn_by_turn():
    offline = build_llm({"backend": "extractive"}, cache_path=None)
    assert ResponseProtocol(batch_turns=True)._turn_workers(offline, 10) == 1
