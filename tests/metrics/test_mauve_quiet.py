"""MAUVE's k-means asks faiss for ~10 points per cluster (mauve-text's rule), which faiss warns
about on stderr for every run; the quantization silences that warning, changes no cluster, and
leaves faiss's other output alone."""

from __future__ import annotations

import numpy as np

from recallbench.metrics.mauve import quantize


def test_quantize_prints_no_faiss_warning_and_keeps_mauve_texts_histograms(capfd):
    from mauve.compute_mauve import cluster_feats

    rng = np.random.default_rng(0)
    p, q = rng.normal(size=(42, 16)), rng.normal(size=(42, 16))
    p_labels, q_labels = quantize(p, q, 4, 25)
    assert capfd.readouterr().err == ""
    # mauve-text's own clustering (faiss defaults) warns, and labels every point the same way
    p_hist, q_hist, *_ = cluster_feats(p, q, 4, norm="l2", whiten=False, seed=25)
    assert "WARNING clustering 84 points to 4 centroids" in capfd.readouterr().err
    assert np.allclose(p_hist, np.bincount(p_labels, minlength=4) / len(p))
    assert np.allclose(q_hist, np.bincount(q_labels, minlength=4) / len(q))
