"""A reported value as a function of which episodes (clusters) it is computed on.

``metrics.bootstrap`` resamples episodes through these: :class:`Additive` (per-episode sums of
additive statistics and an estimator, ``metrics.estimators``: exact, vectorized, storable in
summary.json), :class:`Generic` (recomputed from the resampled episodes, e.g. an ICC) and
:class:`MeanOf` (the mean over sessions of several statistics on the same episodes).

Aligned on more episodes than it has (``aligned``), a statistic knows which of them are its own
(``covers``): an episode without session 5 is absent from the session-5 statistic, not a zero
row of it. :class:`MeanOf` averages, in every resample, only the sessions that some resampled
episode has, so a resample drawing only episodes without session 5 averages sessions 3 and 4
(as the point value averages the sessions the data has) instead of counting session 5 as 0.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from recallbench.metrics.estimators import Spec, estimate
from recallbench.verdict import JSONValue


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

    def covers(self, idx: np.ndarray) -> np.ndarray:
        """Whether each resample ``idx`` (``(..., m)`` positions) holds an episode of this
        statistic (one it has data for, not one it was only aligned on). Default: always."""
        return np.ones(np.asarray(idx).shape[:-1], dtype=bool)

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
    present: np.ndarray | None = field(default=None, repr=False)  # own episodes (None: all)
    vectorized = True

    @classmethod
    def from_items(
        cls,
        clusters: Sequence[str],
        stats: np.ndarray | Sequence[Sequence[float]],
        spec: Spec,
        note: str = "",
        resamples: int | None = None,
    ) -> Additive:
        """Sum per-item statistics ``stats`` (items x d) by the items' cluster ids."""
        rows = np.asarray(stats, dtype=float)
        ids = tuple(dict.fromkeys(clusters))
        if rows.ndim != 2 or rows.shape[0] != len(clusters):
            raise ValueError(f"stats: expected ({len(clusters)}, d), got shape {rows.shape}")
        where = {c: i for i, c in enumerate(ids)}
        matrix = np.zeros((len(ids), rows.shape[1]))
        np.add.at(matrix, [where[c] for c in clusters], rows)
        return cls(ids, matrix, dict(spec), note, resamples)

    def values(self, idx: np.ndarray) -> np.ndarray:
        out: np.ndarray = estimate(self.spec, self.matrix[np.asarray(idx)].sum(axis=-2))
        return out

    def covers(self, idx: np.ndarray) -> np.ndarray:
        idx = np.asarray(idx)
        if self.present is None:
            return np.ones(idx.shape[:-1], dtype=bool)
        out: np.ndarray = self.present[idx].any(axis=-1)
        return out

    def aligned(self, ids: Sequence[str]) -> Additive:
        where = {c: i for i, c in enumerate(self.ids)}
        own = np.ones(len(self.ids), dtype=bool) if self.present is None else self.present
        matrix = np.zeros((len(ids), self.matrix.shape[1]))
        present = np.zeros(len(ids), dtype=bool)
        for j, c in enumerate(ids):
            if c in where:
                matrix[j] = self.matrix[where[c]]
                present[j] = own[where[c]]
        return replace(self, ids=tuple(ids), matrix=matrix, present=present)

    def to_dict(self) -> dict[str, JSONValue]:
        """Return ``{"estimator": spec, "clusters": {id: [sums]}}`` (JSON-ready)."""
        clusters: dict[str, JSONValue] = {
            c: [float(v) for v in row] for c, row in zip(self.ids, self.matrix, strict=True)
        }
        estimator: dict[str, JSONValue] = {**self.spec}
        return {"estimator": estimator, "clusters": clusters}

    @classmethod
    def from_dict(cls, data: Mapping[str, JSONValue]) -> Additive:
        """Inverse of :meth:`to_dict` (TypeError naming the part that is not that shape)."""
        clusters, spec = data["clusters"], data["estimator"]
        if not isinstance(clusters, dict) or not isinstance(spec, dict):
            raise TypeError("bootstrap: expected 'clusters' and 'estimator' objects")
        rows = [_sums(c, v) for c, v in clusters.items()]
        width = max((len(v) for v in rows), default=0)
        matrix = np.array(rows, dtype=float).reshape(len(clusters), width)
        return cls(tuple(clusters), matrix, {k: _setting(k, v) for k, v in spec.items()})


def _sums(cluster: str, value: JSONValue) -> list[float]:
    if not isinstance(value, list) or not all(isinstance(v, int | float) for v in value):
        raise TypeError(f"bootstrap: cluster {cluster!r}: expected a list of numbers")
    return [float(v) for v in value if isinstance(v, int | float)]


def _setting(key: str, value: JSONValue) -> str | int | float | None:
    if value is not None and not isinstance(value, str | int | float):
        raise TypeError(f"bootstrap: estimator {key!r}: expected a plain value, got {value!r}")
    return value


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

    def covers(self, idx: np.ndarray) -> np.ndarray:
        idx = np.asarray(idx)
        if self.own is None:
            return np.ones(idx.shape[:-1], dtype=bool)
        out: np.ndarray = (self.own[idx] >= 0).any(axis=-1)
        return out

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
        """The mean over the parts (sessions) that some resampled episode has."""
        values = np.array([p.values(idx) for p in self.parts], dtype=float)
        covered = np.array([p.covers(idx) for p in self.parts], dtype=bool)
        count = covered.sum(axis=0)
        total = np.where(covered, values, 0.0).sum(axis=0)
        mean: np.ndarray = np.divide(total, count, out=np.zeros_like(total), where=count > 0)
        return mean

    def covers(self, idx: np.ndarray) -> np.ndarray:
        return np.asarray(np.any([p.covers(idx) for p in self.parts], axis=0), dtype=bool)

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
        own = [np.ones(len(s.ids), bool) if s.present is None else s.present for s in (a, b)]
        matrix = np.vstack([a.matrix, b.matrix])
        return Additive(a.ids + b.ids, matrix, a.spec, present=np.concatenate(own))
    if isinstance(a, MeanOf) and isinstance(b, MeanOf) and len(a.parts) == len(b.parts):
        parts = [pooled(pa, pb) for pa, pb in zip(a.parts, b.parts, strict=True)]
        if all(p is not None for p in parts):
            return MeanOf(tuple(parts), a.ids + b.ids)  # type: ignore[arg-type]
    return None
