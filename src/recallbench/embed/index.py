"""Top-k cosine search over unit vectors: numpy for small stores, FAISS for large ones.

Results are ordered by score descending; ties are broken by the lower index, also at the k-th
place, so numpy and FAISS return the same indices and reruns are reproducible.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import faiss

DEFAULT_FAISS_THRESHOLD = 50_000  # rows; below it a numpy matmul + argpartition is as fast
_TIE_MARGIN = 16


def _as_2d(query: np.ndarray, dim: int) -> tuple[np.ndarray, bool]:
    q = np.asarray(query, dtype=np.float32)
    single = q.ndim == 1
    q = q[None, :] if single else q
    if q.ndim != 2 or q.shape[1] != dim:
        raise ValueError(f"query shape {np.shape(query)} does not match vector dim {dim}")
    return q, single


def _topk_row(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k best scores (descending, ties -> lower index first)."""
    if k < scores.shape[0]:
        kth = np.partition(scores, scores.shape[0] - k)[scores.shape[0] - k]
        above = np.flatnonzero(scores > kth)
        ties = np.flatnonzero(scores == kth)[: k - above.size]
        candidates = np.concatenate([above, ties])
    else:
        candidates = np.arange(scores.shape[0])
    order = np.lexsort((candidates, -scores[candidates]))
    return candidates[order]


def _topk_scores(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise top-k of a (q, n) score matrix -> (q, k') indices and scores, k' = min(k, n)."""
    k = min(k, scores.shape[1])
    idx = np.zeros((scores.shape[0], k), dtype=np.int64)
    if k == 0:
        return idx, np.zeros((scores.shape[0], 0), dtype=np.float32)
    for row in range(scores.shape[0]):
        idx[row] = _topk_row(scores[row], k)
    return idx, np.take_along_axis(scores, idx, axis=1)


def topk(query: np.ndarray, matrix: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Return the k rows of ``matrix`` most similar to ``query`` by inner product.

    Args:
        query: (d,) or (q, d) unit vectors.
        matrix: (n, d) unit vectors (cosine = inner product).
        k: number of results; clipped to n.

    Returns:
        (indices, scores): shape (k',) for a 1-D query, (q, k') for a 2-D one, k' = min(k, n);
        int64 indices into ``matrix`` and float32 scores, best first.
    """
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim != 2:
        raise ValueError(f"matrix must be 2-D (n, d), got shape {matrix.shape}")
    q, single = _as_2d(query, matrix.shape[1])
    idx, scores = _topk_scores(q @ matrix.T, k)
    return (idx[0], scores[0]) if single else (idx, scores)


class VectorIndex:
    """An append-only store of unit vectors with top-k search.

    Below ``faiss_threshold`` rows it searches with numpy; above it (or always, with
    ``use_faiss=True``) with a FAISS ``IndexFlatIP`` (exact inner product, same results). Row
    ``i`` is the i-th vector added; callers keep their own id list.

    Args:
        dim: vector size.
        use_faiss: True: always FAISS; False: never; None: by size.
        faiss_threshold: row count from which FAISS is used when ``use_faiss`` is None.
    """

    def __init__(
        self,
        dim: int,
        *,
        use_faiss: bool | None = None,
        faiss_threshold: int = DEFAULT_FAISS_THRESHOLD,
    ) -> None:
        if dim < 1:
            raise ValueError(f"dim must be >= 1, got {dim}")
        self.dim = dim
        self.use_faiss = use_faiss
        self.faiss_threshold = faiss_threshold
        self._chunks: list[np.ndarray] = []
        self._matrix = np.zeros((0, dim), dtype=np.float32)
        self._faiss: faiss.IndexFlatIP | None = None  # built lazily; the first ``ntotal`` rows

    def __len__(self) -> int:
        return len(self._matrix) + sum(len(c) for c in self._chunks)

    def add(self, vectors: np.ndarray) -> None:
        """Append (n, dim) vectors (a single (dim,) vector is accepted too)."""
        v = np.asarray(vectors, dtype=np.float32)
        v = v[None, :] if v.ndim == 1 else v
        if v.ndim != 2 or v.shape[1] != self.dim:
            raise ValueError(f"vectors shape {np.shape(vectors)} does not match dim {self.dim}")
        self._chunks.append(np.ascontiguousarray(v))

    @property
    def matrix(self) -> np.ndarray:
        """All stored vectors as one (n, dim) array."""
        if self._chunks:
            self._matrix = np.concatenate([self._matrix, *self._chunks])
            self._chunks = []
        return self._matrix

    @property
    def backend(self) -> str:
        """``"faiss"`` or ``"numpy"``: what the next search uses."""
        if self.use_faiss is not None:
            return "faiss" if self.use_faiss else "numpy"
        return "faiss" if len(self) >= self.faiss_threshold else "numpy"

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Return the top-k (indices, scores) for a (dim,) or (q, dim) query, like ``topk``."""
        if self.backend == "numpy":
            return topk(query, self.matrix, k)
        if k < 0:
            raise ValueError(f"k must be >= 0, got {k}")
        q, single = _as_2d(query, self.dim)
        index = self._faiss_index()
        # Fetch a few extra hits so that ties at the k-th place resolve to the lower index, as
        # in ``topk``; FAISS itself breaks ties arbitrarily.
        fetch = min(index.ntotal, k + _TIE_MARGIN)
        if fetch == 0:
            return _empty_result(q.shape[0], single)
        scores, idx = index.search(np.ascontiguousarray(q), fetch)
        idx = idx.astype(np.int64)
        for row in range(idx.shape[0]):
            order = np.lexsort((idx[row], -scores[row]))
            idx[row], scores[row] = idx[row][order], scores[row][order]
        idx, scores = idx[:, : min(k, fetch)], scores[:, : min(k, fetch)].astype(np.float32)
        return (idx[0], scores[0]) if single else (idx, scores)

    def _faiss_index(self) -> faiss.IndexFlatIP:
        import faiss

        matrix = self.matrix
        if self._faiss is None:
            self._faiss = faiss.IndexFlatIP(self.dim)
        if self._faiss.ntotal < matrix.shape[0]:
            self._faiss.add(matrix[self._faiss.ntotal :])
        return self._faiss


def _empty_result(n_queries: int, single: bool) -> tuple[np.ndarray, np.ndarray]:
    idx = np.zeros((n_queries, 0), dtype=np.int64)
    scores = np.zeros((n_queries, 0), dtype=np.float32)
    return (idx[0], scores[0]) if single else (idx, scores)
