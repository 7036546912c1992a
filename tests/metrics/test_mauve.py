"""Our MAUVE against the reference library, ``mauve.compute_mauve(p_features=, q_features=)``.

Our metric quantizes as mauve-text's ``cluster_feats`` does (``metrics.mauve.quantize``) and
computes the frontier area with ``frontier_area``. They must agree wherever mauve-text's area is
right (distinct distributions); they differ, by design, where mauve-text 0.4.0 is wrong
(identical or near-identical histograms, where it scores 0.75 instead of 1).
"""

from __future__ import annotations

import mauve
import numpy as np
import pytest

from recallbench.embed.base import Embedder
from recallbench.metrics.mauve import MauveMetric, auto_buckets


class Lookup(Embedder):
    """A fixed feature vector per text (a real embedder over a table, not a patch)."""

    name = "lookup"

    def __init__(self, table: dict[str, np.ndarray]) -> None:
        super().__init__()
        self.table = table
        self.dim = len(next(iter(table.values())))

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.table[t] for t in texts])


def corpus(seed: int, n: int = 120, dim: int = 16, shift: float = 1.5):
    """n reference and n prediction texts whose features come from two different Gaussians."""
    rng = np.random.default_rng(seed)
    refs = [f"ref {i}" for i in range(n)]
    preds = [f"pred {i}" for i in range(n)]
    table = {t: rng.normal(size=dim) for t in refs}
    table |= {t: rng.normal(size=dim) + shift * np.eye(dim)[i % 3] for i, t in enumerate(preds)}
    return preds, refs, Lookup(table)


def reference_mauve(embedder: Lookup, preds: list[str], refs: list[str]):
    p = embedder.encode(refs).astype(np.float64)
    q = embedder.encode(preds).astype(np.float64)
    buckets = auto_buckets(len(refs), len(preds))
    return mauve.compute_mauve(p_features=p, q_features=q, num_buckets=buckets, seed=25)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equals_compute_mauve_on_distinct_distributions(seed):
    preds, refs, embedder = corpus(seed)
    theirs = reference_mauve(embedder, preds, refs)
    ours = MauveMetric(embedder).compute(preds, refs)
    assert 0.05 < theirs.mauve < 0.95  # non-degenerate: neither identical nor disjoint
    assert ours.value == pytest.approx(theirs.mauve, abs=1e-9)
    # Same quantization: our per-item bucket counts sum to mauve-text's histograms.
    counts = np.asarray(ours.stats).sum(axis=0)
    k = ours.estimator["buckets"]
    assert np.allclose(counts[:k] / counts[:k].sum(), theirs.p_hist)
    assert np.allclose(counts[k:] / counts[k:].sum(), theirs.q_hist)


def test_differs_from_compute_mauve_only_where_it_is_wrong():
    # Identical inputs in 4 tight clusters of 5/15/15/5 points: both histograms are
    # [1/8, 3/8, 1/8, 3/8]. MAUVE is 1 by definition; mauve-text 0.4.0 rounds KL slightly below 0
    # and orders tied frontier points arbitrarily, giving 0.75. If this starts failing because
    # mauve-text returns 1, its area is fixed and frontier_area can be dropped.
    rng = np.random.default_rng(0)
    refs = [f"ref {i}" for i in range(40)]
    cluster = np.repeat(np.arange(4), [5, 15, 15, 5])
    features = {
        t: 5 * np.eye(8)[c] + 0.01 * rng.normal(size=8) for t, c in zip(refs, cluster, strict=True)
    }
    tight = Lookup(features)
    theirs = reference_mauve(tight, refs, refs)
    assert sorted(theirs.p_hist) == pytest.approx([0.125, 0.125, 0.375, 0.375])
    assert theirs.mauve == pytest.approx(0.75)
    assert MauveMetric(tight).compute(refs, refs).value == pytest.approx(1.0)
    # Identical inputs whose histogram has no ties: the two agree (both 1).
    preds, refs, embedder = corpus(3)
    same = Lookup({t: embedder.table[t] for t in refs})
    assert reference_mauve(same, refs, refs).mauve == pytest.approx(1.0)
    assert MauveMetric(same).compute(refs, refs).value == pytest.approx(1.0)
