"""A reported value as a function of which episodes (clusters) it is computed on.

``metrics.bootstrap`` resamples episodes through these: :class:`Additive` (per-episode sums of
additive statistics and an estimator, ``metrics.estimators``: exact, vectorized, storable in
summary.json), :class:`Generic` (recomputed from the resampled episodes, e.g. an ICC) and
:class:`MeanOf` (the mean over sessions of several statistics on the same episodes).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from recallbench.metrics.estimators import Spec, estimate


class ClusterStatistic(ABC):
    """A reported value as a function of which episodes (clusters) are included."""

    ids: tuple[str, ...]
    note: str = ""  # how this statistic departs from a plain resample (e.g. fixed quantization)
    resamples: int | None = None  # a cheaper number of resamples for expensive statistics

    @abstractmethod
    def values(self, idx: np.ndarray) -> np.ndarray:
        """Map ``(..., m)`` arrays of positions into ``ids`` (repeats allowed) to values."""

    @abstractmethod
    def aligned(self, ids: Sequence[str]) -> ClusterStatistic:
        """Return this statistic over ``ids`` (an episode it lacks contributes nothing)."""

    vectorized: bool = False

    def value(self) -> float:
        """Return the value on all clusters (the point estimate)."""
        return float(self.values(np.arange(len(self.ids))))


@dataclass(frozen=True, eq=False)
class Additive(ClusterStatistic):
    """Per-episode sums of additive statistics and the estimator that turns sums into a value."""

    ids: tuple[str, ...]
    matrix: np.ndarray  # (clusters, d)
    spec: Spec
    note: str = ""
    resamples: int | None = None
    vectorized = True

    @classmethod
    def from_items(
        cls,
        clusters: Sequence[str],
        stats: np.ndarray | Sequence[Sequence[float]],
        spec: Spec,
        **kw: Any,
    ) -> Additive:
        """Sum per-item statistics ``stats`` (items x d) by the items' cluster ids."""
        rows = np.asarray(stats, dtype=float)
        ids = tuple(dict.fromkeys(clusters))
        if rows.ndim != 2 or rows.shape[0] != len(clusters):
            raise ValueError(f"stats: expected ({len(clusters)}, d), got shape {rows.shape}")
        where = {c: i for i, c in enumerate(ids)}
        matrix = np.zeros((len(ids), rows.shape[1]))
        np.add.at(matrix, [where[c] for c in clusters], rows)
        return cls(ids, matrix, dict(spec), **kw)

    def values(self, idx: np.ndarray) -> np.ndarray:
        return estimate(self.spec, self.matrix[np.asarray(idx)].sum(axis=-2))

    def aligned(self, ids: Sequence[str]) -> Additive:
        where = {c: i for i, c in enumerate(self.ids)}
        matrix = np.zeros((len(ids), self.matrix.shape[1]))
        for j, c in enumerate(ids):
            if c in where:
                matrix[j] = self.matrix[where[c]]
        return replace(self, ids=tuple(ids), matrix=matrix)

    def to_dict(self) -> dict[str, Any]:
        """Return ``{"estimator": spec, "clusters": {id: [sums]}}`` (JSON-ready)."""
        clusters = {
            c: [float(v) for v in row] for c, row in zip(self.ids, self.matrix, strict=True)
        }
        return {"estimator": dict(self.spec), "clusters": clusters}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Additive:
        """Inverse of :meth:`to_dict`."""
        clusters = dict(data["clusters"])
        width = max((len(v) for v in clusters.values()), default=0)
        matrix = np.array(list(clusters.values()), dtype=float).reshape(len(clusters), width)
        return cls(tuple(clusters), matrix, dict(data["estimator"]))


@dataclass(frozen=True, eq=False)
class Generic(ClusterStatistic):
    """A value recomputed from the resampled episodes by ``fn(positions) -> float``."""

    ids: tuple[str, ...]
    fn: Callable[[np.ndarray], float]
    note: str = ""
    resamples: int | None = None
    own: np.ndarray | None = field(default=None, repr=False)  # position in the original ids

    def values(self, idx: np.ndarray) -> np.ndarray:
        idx = np.asarray(idx)
        flat = idx.reshape(-1, idx.shape[-1])
        own = np.arange(len(self.ids)) if self.own is None else self.own
        out = [self.fn(own[row][own[row] >= 0]) for row in flat]
        return np.asarray(out, dtype=float).reshape(idx.shape[:-1])

    def aligned(self, ids: Sequence[str]) -> Generic:
        base = np.arange(len(self.ids)) if self.own is None else self.own
        where = {c: int(base[i]) for i, c in enumerate(self.ids)}
        own = np.array([where.get(c, -1) for c in ids], dtype=int)
        return replace(self, ids=tuple(ids), own=own)


@dataclass(frozen=True, eq=False)
class MeanOf(ClusterStatistic):
    """The mean of several statistics over the same episodes (THEANINE's average of sessions)."""

    parts: tuple[ClusterStatistic, ...]
    ids: tuple[str, ...] = ()
    note: str = ""
    resamples: int | None = None

    @classmethod
    def of(cls, parts: Sequence[ClusterStatistic]) -> MeanOf:
        """Align ``parts`` on the union of their episodes."""
        ids = tuple(dict.fromkeys(c for p in parts for c in p.ids))
        notes = "; ".join(dict.fromkeys(p.note for p in parts if p.note))
        cheap = [p.resamples for p in parts if p.resamples]
        return cls(tuple(p.aligned(ids) for p in parts), ids, notes, min(cheap, default=None))

    @property
    def vectorized(self) -> bool:  # type: ignore[override]
        return all(p.vectorized for p in self.parts)

    def values(self, idx: np.ndarray) -> np.ndarray:
        return np.mean([p.values(idx) for p in self.parts], axis=0)

    def aligned(self, ids: Sequence[str]) -> MeanOf:
        return MeanOf(tuple(p.aligned(ids) for p in self.parts), tuple(ids), self.note)


def rekeyed(stat: ClusterStatistic, key: Callable[[str], str]) -> ClusterStatistic:
    """Rename ``stat``'s clusters by ``key`` (e.g. LUFY's ``lufy/<system>/<user>`` -> user)."""
    ids = tuple(key(c) for c in stat.ids)
    if len(set(ids)) != len(ids):
        raise ValueError(f"pairing key maps several episodes to one: {sorted(ids)[:5]} ...")
    if isinstance(stat, MeanOf):
        return MeanOf(tuple(rekeyed(p, key) for p in stat.parts), ids, stat.note, stat.resamples)
    return replace(stat, ids=ids)  # type: ignore[type-var]


def pooled(a: ClusterStatistic, b: ClusterStatistic) -> ClusterStatistic | None:
    """One statistic over a's then b's episodes, when swapping them is meaningful.

    That is when both compute the same estimator from additive statistics (or a mean of such
    over sessions): then an episode's statistics can stand in either run. None otherwise.
    """
    if isinstance(a, Additive) and isinstance(b, Additive) and dict(a.spec) == dict(b.spec):
        return Additive(a.ids + b.ids, np.vstack([a.matrix, b.matrix]), a.spec)
    if isinstance(a, MeanOf) and isinstance(b, MeanOf) and len(a.parts) == len(b.parts):
        parts = [pooled(pa, pb) for pa, pb in zip(a.parts, b.parts, strict=True)]
        if all(p is not None for p in parts):
            return MeanOf(tuple(parts), a.ids + b.ids)  # type: ignore[arg-type]
    return None
