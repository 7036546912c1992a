"""Fixtures of the LLM layer tests: a local OpenAI-compatible stub server and LLM builders."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from recallbench.llm import LLM, build_llm
from recallbench.testing.stub import StubServer, default_reply


@pytest.fixture(scope="module")
def stub_server() -> Iterator[StubServer]:
    """One stub per test module (started and stopped here), on 127.0.0.1 only."""
    with StubServer() as server:
        yield server


@pytest.fixture()
def stub(stub_server: StubServer) -> StubServer:
    """The module's stub with counters, faults and latency reset for this test."""
    stub_server.reset_stats()
    stub_server.faults.clear()
    stub_server.always = None
    stub_server.latency_s = 0.0
    stub_server.reply = default_reply
    return stub_server


@pytest.fixture()
def make_llm(stub: StubServer, tmp_path: Path) -> Iterator[Callable[..., LLM]]:
    """Build openai-backend LLMs against the stub; closes them after the test."""
    made: list[LLM] = []

    def make(cache: bool = False, **overrides: object) -> LLM:
        cfg = {
            "backend": "openai",
            "model": "gpt-4o-mini",
            "base_url": stub.base_url,
            "concurrency": 8,
            "max_retries": 2,
            "timeout_s": 5,
            **overrides,
        }
        llm = build_llm(cfg, tmp_path / "llm.sqlite" if cache else None)
        made.append(llm)
        return llm

    yield make
    for llm in made:
        llm.close()
