"""Shared-prefix and batched scoring equal one plain forward pass per text (real SmolLM2).

Tolerances follow from the arithmetic, not from one machine's kernels (issue 33: ``TOL = 2e-4``
nats per sequence held under AVX-512 and failed under AVX2 dispatch):

- **Path equivalence** (shared prefix, batching, truncation) is a property of the code, not of
  float32: those tests run SmolLM2 in float64, where two paths' logits agree to ~1e-13. The one
  float32 step left is the scorer's own log-softmax (``causal_scoring._token_nll`` casts the
  logits to float32). Per token it can differ from the exact value by the cast of the logits,
  one float32 spacing of the largest |logit| of the row, plus the rounding of a logsumexp over V
  terms, ``(log2 V + 2) eps32 max(1, |lse|)`` (:func:`_bound`, summed over the scored tokens).
- **The float32 production path** against float64 arithmetic (:func:`_f32_bound`): a float32
  forward pass rounds every dot product of length d (the hidden size) with error growing like
  ``sqrt(d) eps32`` relative to the logit scale, over L layers, so a token may move by up to
  ``L sqrt(d) eps32 M`` nats (M = the row's largest |logit|). That bound is loose (the typical
  error is ~1e-5 nats per token) but scales with what is summed, holds under any kernel
  dispatch, and an off-by-one position or a missing mask still moves a sequence by whole nats.

Both hold under ``ATEN_CPU_CAPABILITY=avx2|default`` (``.ci/run`` runs this file under AVX2).
"""

from __future__ import annotations

import copy
import math

import pytest
import torch

from recallbench.llm.causal_scoring import common_prefix, forward_tokens, plan, sequence_nll
from recallbench.llm.lm_scores import sequences
from recallbench.llm.perplexity import load_default_lm, token_nll

# A CareCall-like session: each turn's prompt is the previous one plus two turns, so the
# sequences share long prefixes (the shared-prefix path), and the replies differ in length.
TURNS = [
    "user: Hi, how are you today?",
    "system: I'm fine, thanks. Did you sleep well?",
    "user: Not really, my back hurts again since Sunday.",
    "system: I'm sorry to hear that. Did you see a doctor?",
    "user: Yes, last Tuesday. He gave me some pills and told me to rest.",
    "system: Good. Are they helping?",
    "user: A little. I also walk every morning now, about twenty minutes.",
    "system: That's great! Walking is good for your back.",
]
HEAD = "Continue the conversation as system. Reply with system's next utterance only.\n\nCurrent session:\n"
EPS32 = float(torch.finfo(torch.float32).eps)


@pytest.fixture(scope="module")
def lm():
    """SmolLM2 in float64: the path-equivalence tests (see the module docstring)."""
    model, tok = load_default_lm()
    return copy.deepcopy(model).double(), tok


@pytest.fixture(scope="module")
def lm32():
    """SmolLM2 as production runs it (float32)."""
    return load_default_lm()


_ROWS: dict[tuple[int, tuple[int, ...], int], torch.Tensor] = {}


def _rows(model, ids: list[int], n: int) -> torch.Tensor:
    """The logits (model dtype) of one plain pass at the positions that predict the last ``n``
    tokens, kept: each reference value and bound reuses the pass."""
    key = (id(model), tuple(ids), n)
    if key not in _ROWS:
        with torch.inference_mode():
            _ROWS[key] = model(input_ids=torch.tensor([ids])).logits[0, len(ids) - n - 1 : -1]
    return _ROWS[key]


def _logits(model, ids: list[int], n: int) -> torch.Tensor:
    """float64 logits of the positions that predict the last ``n`` tokens."""
    return _rows(model, ids, n).double()


def _bound(model, ids: list[int], n: int) -> float:
    """Largest difference two paths through a float64 model can show after the scorer's
    float32 log-softmax: per token, one float32 spacing of the row's largest |logit| (the cast)
    plus the rounding of a V-term logsumexp in float32, summed over the scored tokens."""
    rows = _logits(model, ids, n)
    top = rows.abs().max(dim=-1).values
    lse = torch.logsumexp(rows, dim=-1).abs().clamp(min=1.0)
    spacing = torch.from_numpy(__import__("numpy").spacing(top.float().numpy())).double()
    per_token = 2 * spacing + (math.log2(rows.shape[-1]) + 2) * EPS32 * lse
    return float(per_token.sum())


def _f32_bound(model, ids: list[int], n: int) -> float:
    """Largest move of a float32 forward pass against float64 arithmetic: per token
    ``L sqrt(d) eps32 M`` (L layers, hidden size d, M the row's largest |logit|), summed."""
    cfg = model.config
    rows = _logits(model, ids, n)
    top = rows.abs().max(dim=-1).values
    return float((cfg.num_hidden_layers * math.sqrt(cfg.hidden_size) * EPS32 * top).sum())


def _session() -> tuple[list[str], list[str]]:
    texts, contexts = [], []
    for i in range(1, len(TURNS), 2):
        contexts.append(HEAD + "\n".join(TURNS[:i]) + "\nsystem:")
        texts.append(TURNS[i].removeprefix("system: "))
    return texts, contexts


def _plain(model, ids: list[int], n: int, dtype=torch.float64) -> float:
    """The reference: one forward pass over the whole sequence, full logits, log-softmax in
    ``dtype``, summed exactly."""
    logp = torch.log_softmax(_rows(model, ids, n).to(dtype), dim=-1)
    targets = torch.tensor(ids[len(ids) - n :])[:, None]
    return -math.fsum(logp.gather(1, targets)[:, 0].double().tolist())


def test_common_prefix_matches_a_plain_loop():
    pairs = [((1, 2, 3), (1, 2, 4)), ((1, 2), (1, 2, 3)), ((5,), (6,)), ((), (1,)), ((7,) * 9,) * 2]
    for a, b in pairs:
        naive = next(
            (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
        )
        assert common_prefix(a, b) == naive


def test_plan_chains_long_shared_prefixes_and_dedupes():
    base = tuple(range(100, 140))
    seqs = [(base + (1, 2), 2), (base + (3, 4, 5), 3), ((9, 8, 7), 2), (base + (1, 2), 2)]
    got = plan(seqs, min_shared=32)
    assert [[(s, shared) for s, shared in chain] for chain in got.chains] == [
        [((base + (1, 2), 2), 0), ((base + (3, 4, 5), 3), 40)]
    ]
    assert got.singles == [((9, 8, 7), 2)]
    assert plan(seqs, min_shared=41).chains == []
    # by hand: the chain's first sequence whole (42), the second from its 40 shared tokens, but
    # from its first scored position's predecessor at most (43 - 3 - 1 = 39): 4; the single: 3
    assert forward_tokens(got) == 42 + 4 + 3


def test_shared_prefix_path_equals_one_pass_per_text(lm):
    model, tok = lm
    texts, contexts = _session()
    seqs = [s for s in sequences(texts, contexts, tok, 8192) if s]
    assert len(plan([(tuple(i), n) for i, n in seqs], 32).chains[0]) == len(seqs)  # one chain
    shared = sequence_nll(model, seqs, min_shared=32)
    for (ids, n), value in zip(seqs, shared, strict=True):
        assert value == pytest.approx(_plain(model, ids, n), abs=_bound(model, ids, n))


def test_shared_prefix_reaching_into_the_text_and_exact_prefixes(lm):
    model, tok = lm
    ctx = HEAD + "\n".join(TURNS[:3]) + "\nsystem:"
    # the second text extends the first: their common prefix covers the first's text, and one
    # whole sequence is a prefix of the other
    texts = ["I'm sorry to hear that.", "I'm sorry to hear that. Did you see a doctor?"]
    seqs = [s for s in sequences(texts, [ctx, ctx], tok, 8192) if s]
    assert seqs[1][0][: len(seqs[0][0])] == seqs[0][0]
    got = sequence_nll(model, seqs, min_shared=8)
    for (ids, n), value in zip(seqs, got, strict=True):
        assert value == pytest.approx(_plain(model, ids, n), abs=_bound(model, ids, n))


def test_batching_does_not_change_values(lm):
    model, tok = lm
    texts = [
        "Hi.",
        "I am going to the store to buy some milk and bread.",
        "Yes!",
        "We adopted a cat.",
    ]
    contexts = [None, "Hello! Any plans today?", "A long day at work is finally over.", "News?"]
    seqs = [s for s in sequences(texts, contexts, tok, 8192) if s]
    reference = [_plain(model, ids, n) for ids, n in seqs]
    bounds = [_bound(model, ids, n) for ids, n in seqs]
    for rows, budget in ((1, 4096), (2, 4096), (4, 4096), (4, 40)):
        got = sequence_nll(model, seqs, min_shared=0, max_rows=rows, token_budget=budget)
        for value, ref, bound in zip(got, reference, bounds, strict=True):
            assert value == pytest.approx(ref, abs=bound), (rows, budget)
    # alone (one row, no padding) the scorer IS a plain pass: float32 log-softmax, float64 sum
    alone = sequence_nll(model, seqs, min_shared=0, max_rows=1)
    assert alone == [_plain(model, ids, n, torch.float32) for ids, n in seqs]


def test_truncation_to_the_window_keeps_the_text_end_of_the_context(lm):
    model, tok = lm
    window = 12
    (ids, n), (short, m) = sequences(
        ["one two three four five six", "hi"], ["a b c d e f g h i j", "ok"], tok, window
    )
    text_ids = tok("one two three four five six", add_special_tokens=False)["input_ids"]
    ctx_ids = tok("a b c d e f g h i j\n", add_special_tokens=False)["input_ids"]
    assert len(ids) == window and n == len(text_ids)
    assert ids[1:] == ctx_ids[-(window - 1 - n) :] + text_ids  # context cut from the left
    ((long_ids, k),) = sequences([" ".join(["word"] * 40)], [None], tok, window)
    assert len(long_ids) == window and k == window - 1  # text cut from the right
    assert short[-m:] == tok("hi", add_special_tokens=False)["input_ids"]
    got = sequence_nll(model, [(ids, n), (long_ids, k)])
    for value, (s, m) in zip(got, [(ids, n), (long_ids, k)], strict=True):
        assert value == pytest.approx(_plain(model, s, m), abs=_bound(model, s, m))


def test_float32_scoring_stays_within_float32_forward_noise_of_exact_arithmetic(lm, lm32):
    """Production (float32, shared prefix) against the float64 model's exact plain pass."""
    model64, tok = lm
    model32, _ = lm32
    texts, contexts = _session()
    seqs = [s for s in sequences(texts, contexts, tok, 8192) if s]
    got = sequence_nll(model32, seqs, min_shared=32)
    for (ids, n), value in zip(seqs, got, strict=True):
        exact = _plain(model64, ids, n)
        bound = _f32_bound(model64, ids, n)
        assert abs(value - exact) <= bound, (value, exact, bound)
        assert bound < 0.05 * exact  # the bound is loose, not vacuous: a wrong position moves nats


def test_token_nll_of_a_session_equals_per_text_values(lm):
    model, tok = lm
    texts, contexts = _session()
    together = token_nll(texts, contexts, model=model, tokenizer=tok)
    alone = [
        token_nll([t], [c], model=model, tokenizer=tok)[0]
        for t, c in zip(texts, contexts, strict=True)
    ]
    assert [n for _, n in together] == [n for _, n in alone]
    seqs = [s for s in sequences(texts, contexts, tok, 8192) if s]
    for (v, _), (w, _), (ids, n) in zip(together, alone, seqs, strict=True):
        assert v == pytest.approx(w, abs=2 * _bound(model, ids, n))
    assert all(math.isfinite(v) and v > 0 for v, _ in together)


def test_bad_requests_are_refused(lm):
    model, _ = lm
    with pytest.raises(ValueError, match="trailing tokens"):
        sequence_nll(model, [([1, 2], 2)])
