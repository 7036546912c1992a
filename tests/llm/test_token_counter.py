"""The local token counter counts a long text by its lines, once each, and exactly (issue 38)."""

from __future__ import annotations

import random

from recallbench.llm.backends.gguf import (
    LONG_TEXT,
    gguf_tokenizer,
    line_memo_counter,
    local_token_counter,
    smollm2_gguf,
)

SNIPPETS = [
    "Caroline: I went to the LGBTQ support group yesterday.",
    "Melanie: That's great! How'd it go?",
    "Session 3:",
    "  indented line",
    "trailing spaces   ",
    "\ttabbed",
    "",
    " ",
    "numbers 12,345 and 3.14159 and 2023-05-08",
    "unicode: café — naïve “quotes” 日本語 😀",
    "'s 're 've contractions start a line",
    "<|im_end|>",
    "\r",
    "x\u00a0y",
    "!!! ??? ...",
]


def _texts(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        lines = [rng.choice(SNIPPETS) for _ in range(rng.randint(150, 250))]
        seps = [rng.choice(["\n", "\n", "\n", "\n\n", "\n ", " \n", "\r\n"]) for _ in lines]
        out.append("".join(line + sep for line, sep in zip(lines, seps, strict=True)).rstrip("\n"))
    return out


def test_a_long_text_counts_as_its_whole_encoding():
    tok = gguf_tokenizer(smollm2_gguf())
    count = line_memo_counter(tok)
    texts = _texts(0, 40)
    assert sum(len(t) >= LONG_TEXT for t in texts) >= 35  # counted by pieces
    for text in texts:
        assert count(text) == len(tok.encode(text, add_special_tokens=False).ids), text[:200]
    assert local_token_counter()(texts[0]) == count(texts[0])


class _Spy:
    """The tokenizer, recording the texts it encodes in batches."""

    def __init__(self, tok):
        self.tok, self.batches = tok, []

    def encode(self, text, add_special_tokens=False):
        return self.tok.encode(text, add_special_tokens=add_special_tokens)

    def encode_batch(self, texts, add_special_tokens=False):
        self.batches.append(list(texts))
        return self.tok.encode_batch(texts, add_special_tokens=add_special_tokens)


def test_a_history_is_encoded_once_across_the_prompts_that_hold_it():
    tok = gguf_tokenizer(smollm2_gguf())
    spy = _Spy(tok)
    count = line_memo_counter(spy)
    history = "\n".join(f"Speaker{k % 2}: line number {k} of the story." for k in range(300))
    prompts = [f"Memory:\n{history}\n\nQuestion: what happened at step {q}?" for q in range(5)]
    counts = [count(p) for p in prompts]
    assert counts == [len(tok.encode(p, add_special_tokens=False).ids) for p in prompts]
    first, later = spy.batches[0], [p for batch in spy.batches[1:] for p in batch]
    assert len(first) > 300 and len(later) == 4  # each later prompt: its question line only
    assert all("Question: what happened" in p for p in later)  # with the line before it
