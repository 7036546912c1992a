"""Conditioned perplexity (CareCall Table 4): p(reply | the method's prompt), and memory turns."""

from __future__ import annotations

from datetime import datetime

import pytest

from recallbench.embed import HashingEmbedder
from recallbench.llm import build_llm
from recallbench.memory.gold_memory import GoldMemory
from recallbench.memory.no_memory import NoMemory
from recallbench.metrics import get_metric
from recallbench.metrics.scoring import score_predictions
from recallbench.protocols.response import ResponseProtocol, render_context, uses_memory
from recallbench.records import Episode, Session, Turn

MEMORY = "Your dog Biscuit had surgery on his left paw last Tuesday."
REPLY = "How is your dog Biscuit doing after the surgery on his left paw last Tuesday?"


def _episode() -> Episode:
    def session(index: int, lines: list[tuple[str, str]], memory: list[str]) -> Session:
        sid = f"e/s{index}"
        turns = tuple(Turn(f"{sid}/t{j}", who, text) for j, (who, text) in enumerate(lines))
        return Session(sid, index, datetime(2023, 1, index), turns, {"memory": memory})

    one = session(1, [("system", "Hello, how are you?"), ("user", "My dog had surgery.")], [])
    two = session(
        2,
        [("system", "Hello again."), ("user", "Hi, thanks for calling."), ("system", REPLY)],
        [MEMORY],
    )
    return Episode("e", "carecall", ("system", "user"), (one, two), (), {})


def _predictions(method):
    llm = build_llm({"backend": "extractive"}, cache_path=None)
    protocol = ResponseProtocol(
        target_sessions=[2], responder="system", store_context=True, memory_turn_threshold=0.5
    )
    return [
        p for p in protocol.run_episode(_episode(), method, llm).predictions if p.kind == "response"
    ]


def test_ppl_of_a_reply_that_copies_memory_drops_when_the_memory_is_in_the_prompt(smollm2):
    llm = build_llm({"backend": "extractive"}, cache_path=None)
    embedder = HashingEmbedder(dim=64)
    with_memory = _predictions(
        GoldMemory(llm, embedder, gold_key="memory", prompt_style="carecall")
    )
    without = _predictions(NoMemory(llm, embedder, prompt_style="carecall"))
    target = [p for p in with_memory if p.reference == REPLY]
    assert len(target) == 1 and MEMORY in target[0].meta["context"]
    assert MEMORY not in [p for p in without if p.reference == REPLY][0].meta["context"]

    def ppl(preds) -> float:
        scores, summary = score_predictions(preds, ["perplexity"])
        entry = summary["metrics"]["perplexity"]
        assert entry["meta"]["conditioning"] == "contexts"
        by_id = {s.pred_id: s.value for s in scores}
        return by_id[next(p.pred_id for p in preds if p.reference == REPLY)], entry

    given, entry = ppl(with_memory)
    alone, _ = ppl(without)
    assert given < alone
    # the memory turn is scored again as the "memory_turns" subset
    assert entry["subsets"]["memory_turns"]["n"] == 1
    assert entry["subsets"]["memory_turns"]["value"] == pytest.approx(given)


def test_memory_turn_detector_and_context_rendering():
    assert uses_memory("무릎은 좀 괜찮으세요? 물리치료는요?", ["무릎 물리치료를 받는 중"], 0.3)
    assert not uses_memory("오늘 날씨가 좋네요", ["무릎 물리치료를 받는 중"], 0.3)
    messages = [{"role": "system", "content": "A"}, {"role": "user", "content": "B"}]
    assert render_context(messages) == "A\n\nB"
    with pytest.raises(ValueError, match="memory_turn_threshold"):
        ResponseProtocol(memory_turn_threshold=0)


def test_perplexity_at_model_names_a_metric_under_another_lm():
    metric = get_metric("perplexity@smollm2")
    assert metric.name == "perplexity@smollm2" and metric.model == "smollm2"
    assert get_metric("perplexity@smollm2") is metric
    with pytest.raises(KeyError):
        get_metric("perplexity@")
