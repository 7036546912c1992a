"""Top-k search: numpy argpartition vs brute force, FAISS vs numpy, ties, edge cases."""

from __future__ import annotations

import numpy as np
import pytest

from recallbench.embed import VectorIndex, l2_normalize, topk


def unit(rng: np.random.Generator, n: int, d: int = 32) -> np.ndarray:
    return l2_normalize(rng.normal(size=(n, d)))


def brute(query: np.ndarray, matrix: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    scores = matrix @ query
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:k]
    return np.array(order), scores[order]


@pytest.mark.parametrize("n,k", [(1, 1), (10, 3), (500, 10), (500, 500), (7, 20)])
def test_topk_matches_brute_force(n, k):
    rng = np.random.default_rng(n + k)
    matrix, queries = unit(rng, n), unit(rng, 4)
    idx, scores = topk(queries, matrix, k)
    assert idx.shape == scores.shape == (4, min(k, n))
    for row, q in enumerate(queries):
        want_idx, want_scores = brute(q, matrix, k)
        np.testing.assert_array_equal(idx[row], want_idx)
        np.testing.assert_allclose(scores[row], want_scores, atol=1e-6)
    one_idx, one_scores = topk(queries[0], matrix, k)
    assert one_idx.shape == (min(k, n),)
    np.testing.assert_array_equal(one_idx, idx[0])


def test_topk_ties_break_to_lower_index_even_at_kth_place():
    matrix = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 0.0], [1.0, 0.0], [0.6, 0.8]], np.float32)
    idx, scores = topk(np.array([1.0, 0.0]), matrix, 2)
    assert idx.tolist() == [1, 2]
    np.testing.assert_allclose(scores, [1.0, 1.0])
    idx, _ = topk(np.array([1.0, 0.0]), matrix, 4)
    assert idx.tolist() == [1, 2, 3, 4]


def test_topk_edge_cases():
    matrix = unit(np.random.default_rng(0), 5, 4)
    assert topk(matrix[0], matrix, 0)[0].shape == (0,)
    assert topk(matrix[0], np.zeros((0, 4), np.float32), 3)[0].shape == (0,)
    with pytest.raises(ValueError, match="does not match"):
        topk(np.ones(3), matrix, 1)
    with pytest.raises(ValueError, match="k must be >= 0"):
        topk(matrix[0], matrix, -1)


def test_faiss_equals_numpy_including_incremental_adds():
    rng = np.random.default_rng(7)
    data = unit(rng, 3000, 48)
    queries = unit(rng, 5, 48)
    np_index = VectorIndex(48, use_faiss=False)
    fa_index = VectorIndex(48, use_faiss=True)
    for chunk in np.array_split(data, 3):
        np_index.add(chunk)
        fa_index.add(chunk)
        for k in (1, 10, 100):
            a_idx, a_scores = np_index.search(queries, k)
            b_idx, b_scores = fa_index.search(queries, k)
            np.testing.assert_array_equal(a_idx, b_idx)
            np.testing.assert_allclose(a_scores, b_scores, atol=1e-5)
    assert len(fa_index) == 3000 and fa_index.backend == "faiss"
    idx, _ = fa_index.search(queries[0], 5)
    assert idx.shape == (5,)


def test_faiss_ties_match_numpy():
    matrix = np.array([[1.0, 0.0]] * 6 + [[0.0, 1.0]], np.float32)
    fa = VectorIndex(2, use_faiss=True)
    fa.add(matrix)
    idx, _ = fa.search(np.array([1.0, 0.0]), 3)
    assert idx.tolist() == topk(np.array([1.0, 0.0]), matrix, 3)[0].tolist() == [0, 1, 2]


def test_index_switches_to_faiss_by_size():
    index = VectorIndex(8, faiss_threshold=100)
    index.add(unit(np.random.default_rng(1), 99, 8))
    assert index.backend == "numpy"
    index.add(unit(np.random.default_rng(2), 1, 8))
    assert index.backend == "faiss"
    idx, _ = index.search(index.matrix[42], 1)
    assert idx.tolist() == [42]


def test_index_validation_and_empty_search():
    index = VectorIndex(4, use_faiss=True)
    assert index.search(np.ones(4, np.float32), 3)[0].shape == (0,)
    with pytest.raises(ValueError, match="does not match dim 4"):
        index.add(np.ones((2, 5)))
