"""Causal-LM scores as a service: each (model, context, text) is scored once, then remembered.

``score_pairs(lm, texts, contexts)`` returns (summed NLL, tokens) per text, looked up in order
in this process's memory, then in the on-disk score cache (``llm.score_cache``), and only then
computed with ``llm.causal_scoring`` (shared prefixes, length buckets); the model is loaded only
when something is missing, so a warm run never loads it. ``perplexity``, the perplexity metric
and LUFY's surprise all go through it.

The disk cache of the process is chosen once, by the command line (``use_score_cache``, under
``paths.cache_dir``); with none, scores are remembered in memory only. Counters go to
``recallbench.meter`` (``lm_scores.requested/memory_hits/disk_hits/computed`` over distinct
pairs, ``sequence_tokens`` of the computed ones, ``forward_tokens`` and ``passes`` actually
run) and the time to its ``lm_scoring`` activity; the runner writes both into ``usage.json``.

Sequence recipe (``score_cache.SCHEME``): ``<start> [context "\\n"] text``, ``<start>`` being
``<|endoftext|>`` when the vocabulary has it (GPT-2 / SmolLM convention), else BOS, else EOS, so
the first text token is scored too. Context and text are tokenized apart (no special tokens),
so the text's tokens do not depend on the context. Too-long inputs lose context from the left
first, then text from the right, to fit the model's window.
"""

from __future__ import annotations

import hashlib
import json
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recallbench import meter
from recallbench.llm.causal_scoring import MAX_ROWS, sequence_nll
from recallbench.llm.score_cache import Pair, ScoreCache, model_key
from recallbench.store import JSONValue, process_cache

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase


_memory: dict[tuple[str, str, str], tuple[float, int]] = {}  # (model key, context, text)
_caches: dict[str, ScoreCache] = {}
_default: list[ScoreCache | None] = [None]
_lock = threading.Lock()


def use_score_cache(path: str | Path | None) -> ScoreCache | None:
    """Make ``path`` this process's on-disk score cache (None: memory only); return it."""
    with _lock:  # a server store (store=redis://...) holds the scores instead (process_cache)
        cache: ScoreCache | None = process_cache(_caches, path, ScoreCache)
        _default[0] = cache
    return cache


def clear_memory() -> None:
    """Forget the scores remembered in this process (the disk cache keeps them)."""
    with _lock:
        _memory.clear()


def default_score_cache() -> ScoreCache | None:
    """Return the on-disk score cache set by ``use_score_cache`` (None: memory only)."""
    return _default[0]


class CausalLM:
    """A causal LM to score with, loaded on first need; ``key`` names it in the score cache.

    Build it with ``CausalLM.named(spec)`` (a ``load_causal_lm`` spec: identity read from the
    files, nothing loaded) or ``CausalLM.of(model, tokenizer)`` (an object already in memory:
    identity from its config, dtype and a sample of its weights).
    """

    def __init__(self, name: str, identity: dict[str, Any], loader: Any) -> None:
        self.name = name
        self.identity = identity
        self.key = model_key(identity)
        self._loader = loader
        self._loaded: tuple[PreTrainedModel, PreTrainedTokenizerBase] | None = None
        self.lock = threading.Lock()  # one scoring pass at a time per model

    @classmethod
    def named(cls, spec: str, display: str | None = None) -> CausalLM:
        from recallbench.llm.backends.hf import model_identity

        with _lock:
            found = _named.get(spec)
            if found is None:
                found = _named[spec] = cls(display or spec, model_identity(spec), spec)
        return found

    @classmethod
    def of(
        cls, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, display: str | None = None
    ) -> CausalLM:
        with _lock:
            found = _objects.get(model)
            if found is None or found._loaded != (model, tokenizer):
                name = display or str(getattr(model.config, "_name_or_path", "") or type(model))
                found = cls(name, object_identity(model, tokenizer), None)
                found._loaded = (model, tokenizer)
                _objects[model] = found
        return found

    def load(self) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
        """Return (model, tokenizer), loading them on first use."""
        if self._loaded is None:
            from recallbench.llm.backends.hf import load_causal_lm

            self._loaded = load_causal_lm(self._loader)
        return self._loaded

    def __repr__(self) -> str:
        return f"CausalLM({self.name!r}, key={self.key})"


_named: dict[str, CausalLM] = {}
_objects: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def object_identity(
    model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase
) -> dict[str, JSONValue]:
    """Identify a model object: name, revision, dtype, quantization, config, tokenizer and a
    checksum of a sample of its weights (first, middle and last tensors: cheap, and any
    retraining or requantization moves them)."""
    params = list(model.parameters())
    digest = hashlib.sha256()
    for tensor in (params[0], params[len(params) // 2], params[-1]):
        flat = tensor.detach().reshape(-1)
        digest.update(flat[:4096].float().numpy().tobytes() + str(tuple(tensor.shape)).encode())
    config = model.config
    quant = getattr(config, "quantization_config", None)
    to_dict = getattr(quant, "to_dict", None)
    return {
        "model": str(getattr(config, "_name_or_path", "") or type(model).__qualname__),
        "revision": getattr(config, "_commit_hash", None),
        "dtype": str(params[0].dtype).removeprefix("torch."),
        "quantization": to_dict() if callable(to_dict) else quant,
        "config": hashlib.sha256(config.to_json_string().encode()).hexdigest()[:16],
        "tokenizer": [type(tokenizer).__name__, len(tokenizer), tokenizer.name_or_path],
        "weights": digest.hexdigest()[:16],
    }


def start_id(tokenizer: PreTrainedTokenizerBase) -> int:
    """The token that starts every scored sequence (module docstring)."""
    vocab = tokenizer.get_vocab()
    if "<|endoftext|>" in vocab:
        return int(vocab["<|endoftext|>"])
    for tid in (tokenizer.bos_token_id, tokenizer.eos_token_id):
        if tid is not None:
            return int(tid)
    raise ValueError("perplexity: the tokenizer has no <|endoftext|>, BOS or EOS token")


def sequences(
    texts: Sequence[str],
    contexts: Sequence[str | None],
    tokenizer: PreTrainedTokenizerBase,
    window: int,
) -> list[tuple[list[int], int] | None]:
    """Return (token ids, number of trailing text tokens) per text; None for empty texts."""
    start = start_id(tokenizer)
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


def compute(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    pairs: Sequence[Pair],
    max_rows: int = MAX_ROWS,
) -> list[tuple[float, int]]:
    """Score (context, text) pairs with a loaded model, no caching: (summed NLL, tokens)."""
    window = int(getattr(model.config, "max_position_embeddings", 2048))
    seqs = sequences([t for _, t in pairs], [c for c, _ in pairs], tokenizer, window)
    todo = [s for s in seqs if s]
    meter.count("lm_scores.sequence_tokens", sum(len(ids) for ids, _ in todo))
    nlls = iter(sequence_nll(model, todo, max_rows=max_rows))
    return [(next(nlls), s[1]) if s else (0.0, 0) for s in seqs]


def score_pairs(
    lm: CausalLM,
    texts: Sequence[str],
    contexts: Sequence[str | None] | None = None,
    *,
    cache: ScoreCache | None | bool = True,
    max_rows: int = MAX_ROWS,
) -> list[tuple[float, int]]:
    """Return (summed NLL in nats, scored tokens) per text; (0.0, 0) for an empty text.

    ``cache``: True for the process's disk cache (``use_score_cache``), False or None for
    memory only, or a ``ScoreCache``.
    """
    contexts = list(contexts) if contexts is not None else [None] * len(texts)
    if len(contexts) != len(texts):
        raise ValueError(f"perplexity: {len(texts)} texts but {len(contexts)} contexts")
    disk = default_score_cache() if cache is True else None if cache is False else cache
    pairs = [(c or "", t) for t, c in zip(texts, contexts, strict=True)]
    with meter.timed("lm_scoring"):
        found = _lookup(lm, [p for p in dict.fromkeys(pairs) if p[1].strip()], disk)
        missing = [p for p, v in found.items() if v is None]
        if missing:
            with lm.lock:
                model, tok = lm.load()
                fresh = dict(zip(missing, compute(model, tok, missing, max_rows), strict=True))
            meter.count("lm_scores.computed", len(fresh))
            found.update(fresh)
            _remember(lm, fresh, disk)
    return [found.get(p) or (0.0, 0) for p in pairs]


def _lookup(
    lm: CausalLM, pairs: list[Pair], disk: ScoreCache | None
) -> dict[Pair, tuple[float, int] | None]:
    """Scores of ``pairs`` from memory, then disk; None where neither has one."""
    meter.count("lm_scores.requested", len(pairs))
    found: dict[Pair, tuple[float, int] | None] = {
        p: _memory.get((lm.key, p[0] or "", p[1])) for p in pairs
    }
    meter.count("lm_scores.memory_hits", sum(v is not None for v in found.values()))
    rest = [p for p, v in found.items() if v is None]
    if rest and disk is not None:
        got = disk.get_many(lm.key, rest)
        meter.count("lm_scores.disk_hits", len(got))
        found.update(got)
        for (c, t), v in got.items():
            _memory[(lm.key, c or "", t)] = v
    return found


def _remember(lm: CausalLM, fresh: dict[Pair, tuple[float, int]], disk: ScoreCache | None) -> None:
    for (c, t), v in fresh.items():
        _memory[(lm.key, c or "", t)] = v
    if disk is not None and fresh:
        disk.register(lm.key, json.loads(json.dumps(lm.identity, default=str)))
        disk.put_many(lm.key, fresh)
