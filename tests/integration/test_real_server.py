"""A REAL OpenAI-compatible server: llama-cpp-python serving the SmolLM2-135M GGUF (issue 10).

Starts ``python -m llama_cpp.server`` on 127.0.0.1 and runs one small THEANINE slice and one
LUFY QA slice through ``generator=openai``; a rerun of each must send zero requests (every call
from the LLM cache). SmolLM2-135M is far too small for THEANINE's structured tasks, so their
replies mostly fail to parse: the run must then say ``degraded`` (never a silent ``finished``).

Slow (the server builds llama.cpp from source, ~6-17 min on 2 cores): ``make test-server``,
or ``pytest -m slow tests/integration/`` once ``make server`` installed it.

The server (``recallbench.testing.llama_server``) runs with llama.cpp's extra CPU buffer types
off: see that module for the AMX crash this avoids.
"""

from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.slow


SHORT = "generator.max_tokens=48"
SLICES = {
    "theanine": ["dataset=msc", "memory=theanine", "protocol.target_sessions=[3]", SHORT],
    "lufy_qa": ["experiment=lufy_table11", "lufy_pair=lufy", "judge=lexical", SHORT],
}


@pytest.mark.parametrize("name", sorted(SLICES))
def test_a_real_server_runs_the_slice_and_a_rerun_sends_nothing(name, real_run):
    started = time.monotonic()
    info, usage = real_run("first", SLICES[name])
    wall = time.monotonic() - started
    totals = usage["totals"]
    assert info["status"] in ("finished", "degraded")
    assert totals["calls"] > 0 and totals["cached_calls"] == 0
    assert totals["completion_tokens"] > 0 and totals["failures"] == 0
    if totals["parse_failures"] / totals["calls"] > 0.05:
        assert info["status"] == "degraded"  # never a silent `finished`
    rate = totals["completion_tokens"] / max(totals["latency_s"], 1e-9)
    print(
        f"\n{name}: {totals['calls']} calls, {totals['prompt_tokens']} prompt + "
        f"{totals['completion_tokens']} completion tokens, {rate:.0f} completion tok/s per "
        f"call, {totals['parse_failures']} parse failures, status {info['status']}, "
        f"wall {wall:.0f} s"
    )
    _, again = real_run("rerun", SLICES[name])
    assert again["totals"]["calls"] == totals["calls"]
    assert again["totals"]["cached_calls"] == again["totals"]["calls"]  # zero requests sent
