"""Structured outputs on a REAL server (issue 23.5): llama.cpp accepts the grammar or schema of
every reply shape a PromptTask declares, a constrained reply keeps the shape, and a THEANINE slice
that is ``degraded`` in free text (SmolLM2 echoes the relation list) finishes with
``generator.structured=llamacpp``.

Slow: ``make test-server`` (``make server`` builds llama-cpp-python first).
"""

from __future__ import annotations

import re

import pytest

from recallbench.llm import PromptTask, build_llm
from recallbench.llm.shapes import Choice, Pattern

pytestmark = pytest.mark.slow


def test_llama_cpp_accepts_every_declared_shape_and_keeps_the_reply_in_it(server, declared_tasks):
    llm = build_llm(
        {
            "backend": "openai",
            "model": "smollm2",
            "base_url": server,
            "structured": "llamacpp",
            "timeout_s": 300,
            "max_retries": 0,
        },
        None,
    )
    seen = set()
    for task in declared_tasks:
        probe = PromptTask(
            name=task.name,
            template="Reply in the required format: {x}",
            max_tokens=min(task.max_tokens, 96),
            reply=task.reply,
        )
        result = llm.run(probe, x="a short example")
        assert result.failure is None, (task.name, result.failure)
        shape = task.reply
        if isinstance(shape, Choice):
            assert result.raw in shape.labels, (task.name, result.raw)
        elif isinstance(shape, Pattern) and result.completion_tokens < probe.max_tokens:
            assert re.fullmatch(shape.pattern, result.raw), (task.name, result.raw)
        seen.add(task.name)
    llm.close()
    assert len(seen) >= 25


def test_a_theanine_slice_finishes_with_structured_replies(real_run):
    args = ["dataset=msc", "memory=theanine", "protocol.target_sessions=[3]"]
    info, usage = real_run("structured", [*args, "generator.structured=llamacpp"])
    link = usage["tasks"]["theanine.link_relation"]
    assert info["status"] == "finished" and info["generator"]["structured"] == "llamacpp"
    assert link["calls"] > 0 and link["parse_failures"] == 0
    assert usage["totals"]["failures"] == 0
