"""BERTScore (MiniLM), MAUVE (MiniLM / hashing features), perplexity (SmolLM2)."""

from __future__ import annotations

import random

import pytest
import torch

from recallbench import meter
from recallbench.embed import HashingEmbedder
from recallbench.errors import ConfigError
from recallbench.llm.perplexity import token_nll
from recallbench.metrics import get_metric, perplexity
from recallbench.metrics.bertscore import BERTScoreMetric
from recallbench.metrics.mauve import MauveMetric, auto_buckets, frontier_area
from recallbench.metrics.perplexity import PerplexityMetric

FLUENT = "The weather is nice today, so I went for a walk in the park with my dog."


def test_bertscore_identical_vs_different():
    preds = ["I love hiking in the mountains.", "I love hiking in the mountains."]
    refs = ["I love hiking in the mountains.", "The invoice was paid in March."]
    result = get_metric("bertscore").compute(preds, refs)
    assert result.items[0] == pytest.approx(1.0, abs=1e-4)
    assert result.items[1] < 0.5
    paraphrase = get_metric("bertscore").compute(
        preds[:1], ["Hiking in the mountains is my passion."]
    )
    assert result.items[1] < paraphrase.value < result.items[0]
    assert result.meta["num_layers"] == 6 and "all-MiniLM-L6-v2" in result.meta["model"]
    assert result.meta["rescaled"] is False


def test_bertscore_scores_a_pair_once_per_metric_and_as_alone(monkeypatch):
    import bert_score

    pairs = [("I walked the dog.", "We walked our dog."), ("Tea is hot.", "The invoice was paid.")]
    metric = BERTScoreMetric()
    whole = metric.compute([p for p, _ in pairs], [r for _, r in pairs])
    encoded: list[int] = []
    score = bert_score.BERTScorer.score

    def counted(self, cands, refs, *args, **kwargs):
        encoded.append(len(cands))
        return score(self, cands, refs, *args, **kwargs)

    monkeypatch.setattr(bert_score.BERTScorer, "score", counted)
    part = metric.compute([pairs[1][0]], [pairs[1][1]])  # a session's subset: looked up
    assert encoded == [] and part.items == whole.items[1:]
    alone = BERTScoreMetric().compute([pairs[1][0]], [pairs[1][1]])  # computed by itself
    assert encoded == [1] and alone.items[0] == pytest.approx(whole.items[1], abs=1e-5)


def test_bertscore_refuses_rescaling_a_local_model():
    with pytest.raises(ConfigError, match="does nothing for local model paths"):
        BERTScoreMetric(rescale_with_baseline=True)


FRUITS = ["apples", "pears", "plums", "mangoes", "cherries", "grapes", "peaches", "figs"]
MEALS = ["breakfast", "lunch", "dinner", "a snack", "dessert"]
TEAMS = ["the Lions", "the Sharks", "the Eagles", "the Wolves", "the Bears", "the Hawks"]
VERBS = ["beat", "lost to", "tied with", "outplayed", "upset", "crushed", "edged", "trailed"]


def food() -> list[str]:
    return [f"I like eating fresh {f} for {m}." for f in FRUITS for m in MEALS]  # 40


def sports() -> list[str]:
    pairs = [(a, b) for a in TEAMS for b in TEAMS if a != b]  # 30 pairs
    return [f"Last night {a} {VERBS[i % 8]} {b}." for i, (a, b) in enumerate(pairs * 2)][:40]


def test_mauve_identical_distributions_beat_different(minilm):
    metric = MauveMetric(minilm)
    refs = food()
    same = metric.compute(refs, refs)
    close = metric.compute(random.Random(0).sample(refs, len(refs)), refs)
    different = metric.compute(sports(), refs)
    assert same.value == pytest.approx(1.0)
    assert close.value > 0.9
    assert different.value < 0.1 < same.value
    assert different.meta["num_buckets"] == 4 and "not comparable" in different.meta["note"]
    assert "warning" in different.meta  # 40 < 50 samples


@pytest.mark.parametrize("n", [1, 2, 3, 9, 25])
def test_mauve_small_n_is_total_and_seeded(n):
    metric = MauveMetric(HashingEmbedder())
    preds, refs = sports()[:n], food()[:n]
    first = metric.compute(preds, refs)
    assert 0.0 <= first.value <= 1.0 and first.meta["num_buckets"] == auto_buckets(n, n)
    assert metric.compute(preds, refs).value == first.value


def test_frontier_area_fixes_identical_histograms_and_agrees_elsewhere():
    import numpy as np
    from mauve.compute_mauve import get_divergence_curve_for_multinomials
    from sklearn.metrics import auc

    p = np.array([0.125, 0.375, 0.375, 0.125])
    assert frontier_area(p, p.copy()) == pytest.approx(1.0)  # mauve-text 0.4.0 gives 0.75 here
    q = np.array([0.4, 0.1, 0.2, 0.3])
    x, y = get_divergence_curve_for_multinomials(p, q, np.linspace(1e-6, 1 - 1e-6, 25), 5).T
    i, j = np.argsort(x), np.argsort(y)
    library = 0.5 * (auc(x[i], y[i]) + auc(y[j], x[j]))  # mauve-text's own formula
    assert frontier_area(p, q) == pytest.approx(library, abs=1e-12)
    assert 0.0 < frontier_area(p, q) < 1.0


def test_mauve_auto_buckets():
    assert [auto_buckets(n, n) for n in (1, 14, 15, 40, 3600)] == [2, 2, 2, 4, 360]
    assert auto_buckets(1000, 30) == 3


def test_perplexity_fluent_below_shuffled(smollm2):
    words = FLUENT.split()
    random.Random(1).shuffle(words)
    fluent, shuffled = perplexity([FLUENT, " ".join(words)])
    assert 1.0 < fluent < 60 and shuffled > 5 * fluent


def test_perplexity_context_cap_and_empty(smollm2):
    answer = "My dog's name is Max."
    alone, given = perplexity([answer, answer], contexts=[None, "What is your dog's name?"])
    assert given < alone
    capped = perplexity([answer, "zq xv"], cap=5.0)
    assert max(capped) == 5.0
    assert perplexity(["", "  "]) == [0.0, 0.0]


def test_token_nll_matches_transformers_loss(smollm2):
    model, tok = smollm2
    ((nll, n),) = token_nll([FLUENT], model=model, tokenizer=tok)
    ids = torch.tensor([[0, *tok(FLUENT, add_special_tokens=False)["input_ids"]]])
    with torch.inference_mode():
        loss = model(input_ids=ids, labels=ids).loss  # mean over all tokens after <|endoftext|>
    assert n == ids.shape[1] - 1
    assert nll / n == pytest.approx(float(loss), rel=1e-4)


def test_perplexity_padding_does_not_change_values(smollm2):
    model, tok = smollm2
    texts = [FLUENT, "Hi.", "I am going to the store to buy some milk and bread."]
    contexts = [None, "A long day at work is finally over, and the evening is quiet.", "Hello!"]
    # left padding differs per row: uneven contexts and texts, one of them without context
    batched = perplexity(texts, contexts, model=model, tokenizer=tok, batch_size=3)
    single = perplexity(texts, contexts, model=model, tokenizer=tok, batch_size=1)
    assert batched == pytest.approx(single, rel=1e-4)


def test_perplexity_metric_is_token_weighted_and_memoized(smollm2):
    metric = PerplexityMetric()
    refs = [FLUENT, "Hi.", ""]
    result = metric.compute(["ignored"] * 3, refs)
    items = perplexity(refs)
    assert result.items == pytest.approx(items, rel=1e-5)
    assert result.items[2] == 0.0 and result.meta["mean_of_items"] == pytest.approx(
        (items[0] + items[1]) / 2, rel=1e-5
    )
    assert min(items[:2]) < result.value < max(items[:2])
    assert "SmolLM2-135M" in result.meta["model"]
    before = meter.snapshot()
    metric.compute(["x"], [FLUENT])  # scored above: remembered, not computed again
    counts = meter.delta(before)["lm_scores"]
    assert counts["memory_hits"] == 1 and counts.get("computed", 0) == 0
    with pytest.raises(ValueError, match="one reference per item"):
        metric.compute(["x"], [["a", "b"]])
