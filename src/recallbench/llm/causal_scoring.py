"""Summed NLL of the trailing tokens of token sequences under a causal LM, sharing work.

``sequence_nll(model, [(ids, n), ...])`` returns, per sequence, the summed negative
log-likelihood (nats) of its last ``n`` tokens given the tokens before them: exactly what one
forward pass per sequence gives, computed with less work:

- identical sequences are scored once;
- sequences are visited in lexicographic order of their token ids, so each one's longest common
  prefix with the one before it is its longest common prefix with *any* earlier one. Where that
  prefix is long (``min_shared`` tokens: a CareCall turn's prompt is the previous turn's prompt
  plus two turns), the sequence is scored incrementally on the key/value cache of the one before
  it, cropped to the shared prefix: a family of such sequences costs one pass per distinct
  prefix, the least any exact computation can do;
- the others are scored in right-padded batches of similar length (``token_budget`` tokens per
  pass, ``max_rows`` rows). Right padding needs no attention mask: a causal model never lets a
  real token see the padding after it, and only real positions are read.

Batch size: ``token_budget`` = 512 padded tokens per pass (at most ``max_rows`` = 32 rows).
Bigger batches do not pay on a CPU: the forward pass already keeps the cores busy at a few rows,
while the float32 logits of a batch (rows x kept positions x the 49,152-word vocabulary x 4
bytes, several hundred MB at 2048 tokens) only add memory traffic. Measured on 64 LUFY-like
sequences (30-110 tokens, 8-40 scored; one thread, CPU seconds, best of 2, this 2-core machine
under load, ``bench/lm_batch.py``): 512 tokens 13.9 s, 1024 14.6 s, 2048 15.9 s.
The values do not depend on it (see Numerics).

Numerics: only the logits of scored positions are computed (``logits_to_keep``); the
log-softmax runs over the vocabulary as the last (contiguous) dimension in float32 and each
sequence's token NLLs are summed in float64. A sequence's value does not depend on which path
scored it or with which batch beyond float32 noise (~1e-5 nats per token: matrix products of
other shapes round differently); ``tests/llm/test_causal_scoring.py`` checks both paths against
one plain forward pass per sequence on the real SmolLM2.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from recallbench import meter

if TYPE_CHECKING:
    from transformers import PreTrainedModel


MIN_SHARED = 32  # a shared prefix at least this long is reused from the key/value cache
TOKEN_BUDGET = 512  # padded tokens per batched forward pass (module docstring)
MAX_ROWS = 32

Seq = tuple[tuple[int, ...], int]  # (token ids, number of trailing tokens scored)


@dataclass
class Plan:
    """How a set of sequences is scored: chains share a key/value cache, the rest is batched."""

    chains: list[list[tuple[Seq, int]]]  # per chain: (sequence, prefix shared with the previous)
    singles: list[Seq]


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Return the length of the longest common prefix of two token sequences."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo] and a[:hi] != b[:hi]: bisect with C-speed slice compares
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def plan(seqs: Sequence[Seq], min_shared: float = MIN_SHARED) -> Plan:
    """Group distinct sequences into cache-sharing chains (lexicographic order) and singles."""
    ordered = sorted(set(seqs), key=lambda s: (s[0], s[1]))
    chains: list[list[tuple[Seq, int]]] = []
    current: list[tuple[Seq, int]] = []
    for i, seq in enumerate(ordered):
        shared = common_prefix(ordered[i - 1][0], seq[0]) if i else 0
        if current and shared >= min_shared:
            current.append((seq, shared))
        else:
            if current:
                chains.append(current)
            current = [(seq, 0)]
    if current:
        chains.append(current)
    singles = [c[0][0] for c in chains if len(c) == 1]
    return Plan([c for c in chains if len(c) > 1], singles)


def forward_tokens(todo: Plan) -> int:
    """Tokens ``todo`` runs through the model at best: each chain's first sequence whole, every
    later one from its shared prefix (never past its first scored position, as ``_chain_nll``
    runs them), every single once without padding (``bench/lm_floor.py``)."""
    total = sum(len(ids) for ids, _ in todo.singles)
    for chain in todo.chains:
        total += len(chain[0][0][0])
        total += sum(len(ids) - min(shared, len(ids) - n - 1) for (ids, n), shared in chain[1:])
    return total


def sequence_nll(
    model: PreTrainedModel,
    seqs: Sequence[tuple[Sequence[int], int]],
    *,
    min_shared: int = MIN_SHARED,
    token_budget: int = TOKEN_BUDGET,
    max_rows: int = MAX_ROWS,
) -> list[float]:
    """Return the summed NLL (nats) of the last ``n`` tokens of each ``(ids, n)``.

    Every sequence needs ``n >= 1`` and at least one token before the scored ones.
    ``min_shared=0`` never shares a prefix; a ``token_budget`` below the longest sequence
    gives it a pass of its own.
    """
    wanted: list[Seq] = [(tuple(ids), int(n)) for ids, n in seqs]
    for ids, n in wanted:
        if not 1 <= n < len(ids):
            raise ValueError(f"score {n} trailing tokens of a {len(ids)}-token sequence")
    todo = plan(wanted, min_shared if min_shared > 0 else math.inf)
    done: dict[Seq, float] = {}
    for chain in todo.chains:
        done.update(_chain_nll(model, chain))
    for batch in _buckets(todo.singles, token_budget, max_rows):
        done.update(zip(batch, _batch_nll(model, batch), strict=True))
    return [done[s] for s in wanted]


def _buckets(seqs: list[Seq], token_budget: int, max_rows: int) -> list[list[Seq]]:
    """Batches of similar length: sorted by length, cut where rows x width passes the budget."""
    batches: list[list[Seq]] = []
    current: list[Seq] = []
    for seq in sorted(seqs, key=lambda s: (len(s[0]), s)):
        width = len(seq[0])  # the longest so far: sorted by length
        if current and ((len(current) + 1) * width > token_budget or len(current) >= max_rows):
            batches.append(current)
            current = []
        current.append(seq)
    if current:
        batches.append(current)
    return batches


def _token_nll(logits: Any, targets: Any) -> Any:
    """Per-token NLL (float32 log-softmax over the vocabulary as the last dimension)."""
    import torch

    return torch.nn.functional.cross_entropy(logits.float(), targets, reduction="none")


def _batch_nll(model: Any, batch: list[Seq]) -> list[float]:
    """Score right-padded sequences in one forward pass (no attention mask needed)."""
    import torch

    width = max(len(ids) for ids, _ in batch)
    firsts = [len(ids) - n - 1 for ids, n in batch]  # position predicting the first scored token
    keep = width - min(firsts)
    ids = torch.zeros((len(batch), width), dtype=torch.long)
    for row, (seq, _) in enumerate(batch):
        ids[row, : len(seq)] = torch.tensor(seq)
    rows: list[int] = []
    cols: list[int] = []
    targets: list[int] = []
    for row, ((seq, n), first) in enumerate(zip(batch, firsts, strict=True)):
        rows += [row] * n
        cols += range(first - (width - keep), first - (width - keep) + n)
        targets += seq[first + 1 :]
    with torch.inference_mode():
        logits = model(input_ids=ids, logits_to_keep=keep, use_cache=False).logits
        nll = _token_nll(logits[rows, cols], torch.tensor(targets)).double().tolist()
    meter.count("lm_scores.forward_tokens", len(batch) * width)
    meter.count("lm_scores.passes")
    out, start = [], 0
    for _, n in batch:
        out.append(math.fsum(nll[start : start + n]))
        start += n
    return out


def _chain_nll(model: Any, chain: list[tuple[Seq, int]]) -> dict[Seq, float]:
    """Score a chain one sequence at a time, each on the cache of the one before, cropped to
    the prefix they share (and never past the first position whose logits are needed)."""
    import torch
    from transformers import DynamicCache

    cache = DynamicCache()
    # transformers 5 renamed ``past_key_values`` to ``cache`` (the old name warns, then goes)
    name = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
    out: dict[Seq, float] = {}
    with torch.inference_mode():
        for (ids, n), shared in chain:
            first = len(ids) - n - 1
            start = min(shared, first)
            surplus = cache.get_seq_length() - start
            if surplus > 0:
                cache.crop(-surplus)  # a negative count removes tokens in every 5.x release
            piece = torch.tensor([ids[start:]])
            kwargs = {name: cache, "use_cache": True, "logits_to_keep": n + 1}
            logits = model(input_ids=piece, **kwargs).logits[0, :-1]
            nll = _token_nll(logits, torch.tensor(ids[first + 1 :]))
            out[(ids, n)] = math.fsum(nll.double().tolist())
            meter.count("lm_scores.forward_tokens", len(ids) - start)
            meter.count("lm_scores.passes")
    return out
