"""MAUVE (Pillutla et al., 2021) between references (human, p) and predictions (model, q).

Default features: all-MiniLM-L6-v2 sentence embeddings (offline) passed to
``mauve.compute_mauve(p_features=..., q_features=...)``. The original featurizer is GPT-2-large
(``featurizer="gpt2-large"``, registry name ``mauve_gpt2_large``, needs the HF Hub); MiniLM MAUVE
is NOT comparable to GPT-2-large MAUVE such as THEANINE's Table 1, and every result says so.

Quantization: ``num_buckets="auto"`` is mauve-text's rule, round(min(n_p, n_q) / 10) clusters
with a minimum of 2: about ten samples per cluster per side (mauve-text's heuristic). With few
samples MAUVE is a coarse, high-variance estimate (below ~50 pairs only 2-5 clusters exist and one
outlier moves the score a lot); ``meta["warning"]`` flags n < 50. Clustering is seeded (k-means
in faiss, PCA in scikit-learn), so a rerun gives the same value.

Area fix: mauve-text 0.4.0 computes KL(q || w p + (1 - w) q) slightly below 0 by rounding when the
histograms (nearly) coincide, and sorts frontier points with equal x in arbitrary order; identical
inputs then score 0.75 instead of 1. ``frontier_area`` recomputes MAUVE from mauve-text's own
histograms and divergence curve with values clipped to <= 1 and ties ordered along the frontier;
elsewhere it equals mauve-text's number.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from recallbench.embed.base import Embedder
from recallbench.metrics.base import Metric, MetricResult, Reference, check_inputs

SMALL_N = 50
CURVE_POINTS = 25  # mauve-text's divergence_curve_discretization_size
SCALING = 5.0  # mauve-text's mauve_scaling_factor
NOT_COMPARABLE = "{}-feature MAUVE: not comparable to GPT-2-large MAUVE (original paper)"


def frontier_area(p_hist: np.ndarray, q_hist: np.ndarray) -> float:
    """Return MAUVE (area under the divergence frontier) of two histograms, robust to ties."""
    from mauve.compute_mauve import get_divergence_curve_for_multinomials
    from sklearn.metrics import auc

    weights = np.linspace(1e-6, 1 - 1e-6, CURVE_POINTS)
    curve = get_divergence_curve_for_multinomials(p_hist, q_hist, weights, SCALING)
    x, y = np.minimum(curve, 1.0).T
    # The frontier falls as x grows: equal x -> larger y first (and symmetrically for y).
    by_x, by_y = np.lexsort((-y, x)), np.lexsort((-x, y))
    return float(0.5 * (auc(x[by_x], y[by_x]) + auc(y[by_y], x[by_y])))


def auto_buckets(n_p: int, n_q: int) -> int:
    """Return mauve-text's default number of clusters: round(min(n_p, n_q) / 10), at least 2."""
    return max(2, int(round(min(n_p, n_q) / 10)))


class MauveMetric(Metric):
    """MAUVE of predictions against references, a corpus-level distribution similarity.

    Input: aligned predictions and references (a list of references contributes all of them to
    the human distribution). Range: [0, 1]; identical lists give 1. ``items`` is None. No
    predictions, or only empty ones, -> 0.

    Args:
        embedder: feature extractor for ``featurizer="embedder"``; None: the PyPI MiniLM.
        featurizer: "embedder" or "gpt2-large" (mauve-text's own featurization, needs the Hub).
        num_buckets: "auto" or a number of k-means clusters.
        seed: clustering seed (mauve-text default 25).
    """

    name = "mauve"
    description = __doc__

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        featurizer: Literal["embedder", "gpt2-large"] = "embedder",
        num_buckets: int | Literal["auto"] = "auto",
        seed: int = 25,
        name: str = "mauve",
    ) -> None:
        if featurizer not in ("embedder", "gpt2-large"):
            raise ValueError(f"featurizer must be 'embedder' or 'gpt2-large', got {featurizer!r}")
        self._embedder = embedder
        self.featurizer = featurizer
        self.num_buckets = num_buckets
        self.seed = seed
        self.name = name

    @property
    def embedder(self) -> Embedder:
        """The feature extractor (MiniLM, loaded on first use, unless one was injected)."""
        if self._embedder is None:
            from recallbench.embed.minilm import MiniLMEmbedder

            self._embedder = MiniLMEmbedder()
        return self._embedder

    def compute(self, predictions: Sequence[str], references: Sequence[Reference]) -> MetricResult:
        preds, refs = check_inputs(self.name, predictions, references)
        human = [r for rs in refs for r in rs]
        n = min(len(preds), len(human))
        if self.num_buckets == "auto":
            buckets = auto_buckets(len(human), len(preds))
        else:  # k-means needs at least as many points as clusters
            buckets = max(1, min(int(self.num_buckets), len(human) + len(preds)))
        meta = {
            "implementation": "mauve-text compute_mauve histograms, tie-robust frontier_area",
            "featurizer": self.embedder.name if self.featurizer == "embedder" else "gpt2-large",
            "num_buckets": buckets,
            "seed": self.seed,
            "n_predictions": len(preds),
            "n_references": len(human),
        }
        if self.featurizer == "embedder":
            meta["note"] = NOT_COMPARABLE.format(self.embedder.name)
        if n < SMALL_N:
            meta["warning"] = f"only {n} samples: MAUVE is a coarse, high-variance estimate"
        if not any(p.strip() for p in preds):
            return MetricResult(0.0, None, meta)
        return MetricResult(self._mauve(preds, human, buckets), None, meta)

    def _mauve(self, preds: list[str], human: list[str], buckets: int) -> float:
        import mauve

        if self.featurizer == "gpt2-large":
            try:
                out = mauve.compute_mauve(
                    p_text=human, q_text=preds, num_buckets=buckets, seed=self.seed, device_id=-1
                )
            except OSError as exc:
                raise RuntimeError(
                    "MAUVE with featurizer='gpt2-large' downloads gpt2-large from the HF Hub; "
                    "offline, use the default embedder featurizer"
                ) from exc
        else:
            p = self.embedder.encode(human).astype(np.float64)
            q = self.embedder.encode(preds).astype(np.float64)
            out = mauve.compute_mauve(
                p_features=p, q_features=q, num_buckets=buckets, seed=self.seed
            )
        return min(1.0, max(0.0, frontier_area(out.p_hist, out.q_hist)))
