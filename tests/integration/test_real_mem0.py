"""``make test-server``: Mem0 on one LoCoMo conversation against the real llama.cpp server.

Mem0's extraction (``mem0.extract``, a JSON reply shape) with structured replies, LoCoMo's answers
in free text, Mem0's judge J (JSON shape) on the same server: every call is parsed or counted,
and the run ends ``finished`` or honestly ``degraded`` (parse failures over the health limit),
never failed. The fixture conversation conv-2 (2 sessions) keeps it short.

First run (2026-11-28): at the server's 8,192 tokens every ``mem0.extract`` call was refused by
the server (mem0ai 2.2's extraction prompt alone is 8,530 SmolLM2 tokens): 4 calls, 4 call
failures, 0 parse failures, the run honestly ``degraded``; J 2 calls, 0 failures. Mem0's
extraction is thus not exercised on this server; a 16,384-token server (``LlamaServer(n_ctx=
16384)``, ``generator.context_length=16384``) would send it (not yet run to the end here).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow


def test_mem0_on_one_locomo_conversation_with_structured_replies(real_run):
    args = [
        "dataset=locomo",
        "dataset.options.conversations=conv-2",
        "protocol=locomo_qa",
        "+judge=mem0_j",
        "memory=mem0",
        "embedder=hashing",
        "memory.threshold=0.0",
        "generator.structured=llamacpp",
    ]
    info, usage = real_run("mem0", args)
    assert info["status"] in ("finished", "degraded"), info
    assert "mem0ai" in info["versions"]
    extract = usage["tasks"]["mem0.extract"]
    assert extract["calls"] > 0
    assert extract["parse_failures"] + extract["failures"] <= extract["calls"]  # counted
    judge = usage["tasks"]["judge.mem0_j"]
    assert judge["calls"] > 0
    for name in ("mem0.extract", "judge.mem0_j"):  # the counts the report quotes (pytest -s)
        task = usage["tasks"][name]
        print(
            f"{name}: calls {task['calls']}, parse failures {task['parse_failures']}, "
            f"call failures {task['failures']}; run {info['status']}"
        )
    if info["status"] == "finished":
        assert extract["parse_failures"] == 0 and judge["parse_failures"] == 0
