"""Fit LUFY's strength weights (Table 2) to annotated importance with Levenberg-Marquardt.

LUFY sec. 3.4: with dt = 1 (annotation happens one time step after the conversation), the
importance of an utterance pair is e^(-1/S), S = wA*A + wP*P + wL*L + wR1*R1 + wR2*R2 on
normalized metrics; the weights minimize an L2-regularized squared loss against the annotators'
binary labels, by Levenberg-Marquardt from p0 = [1, 1, 1]. First wA, wP, wL (R1 = R2 = 0) on
CANDOR pairs, then wR1, wR2 with the first three fixed on human-RAG chatbot pairs.

Here: ``scipy.optimize.least_squares(method="lm")`` with the L2 penalty as extra residuals
sqrt(l2) * w; S is floored at a small positive value (e^(-1/S) -> 0 as S -> 0+). Targets are the
mean of the annotators' 0/1 labels of each user turn (equivalent to one residual per label up to
a constant). wR2 is fitted as a signed coefficient of S (negative = R2 lowers strength), so it
compares directly with Table 2's printed -0.012.

Deviations:
- CANDOR is not available here: both stages use the LUFY dataset (stage 1: every annotated user
  turn of the chosen systems; stage 2: the ``Naive RAG`` conversations, whose R1/R2 counts are
  recorded by replaying them through a no-forgetting LUFY-family store, as the paper's
  pre-experiment human-RAG chatbot did live).
- Metrics are ours (``recallbench.memory.lufy._lufy``): MiniLM-ridge arousal, SmolLM2 perplexity and,
  on the extractive backend, the lexical L heuristic; so our weights need not match Table 2.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import least_squares

from recallbench.memory import replay_recalls
from recallbench.memory.lufy import METRICS, PAPER_WEIGHTS, Lufy, LufyFamilyMemory
from recallbench.records import Episode
from recallbench.verdict import JSONValue

S_FLOOR = 1e-3


@dataclass
class FitResult:
    """Fitted weights and the optimizer's report."""

    weights: dict[str, float]
    cost: float
    n: int
    nfev: int
    success: bool
    message: str
    l2: float
    mse: float

    def to_dict(self) -> dict[str, JSONValue]:
        """Return a JSON-ready dict."""
        return dict(vars(self))


def predicted_importance(
    x: np.ndarray, w: np.ndarray, offset: np.ndarray | float = 0.0, dt: float = 1.0
) -> np.ndarray:
    """Return e^(-dt/S) with S = x @ w + offset, S floored at ``S_FLOOR``."""
    s = np.maximum(np.asarray(x) @ np.asarray(w) + offset, S_FLOOR)
    out: np.ndarray = np.exp(-dt / s)  # numpy's ufunc stubs return Any
    return out


def fit_weights(
    x: np.ndarray,
    y: np.ndarray,
    names: Sequence[str],
    *,
    l2: float = 1e-3,
    dt: float = 1.0,
    p0: Sequence[float] | None = None,
    offset: np.ndarray | float = 0.0,
) -> FitResult:
    """Fit weights of the columns of ``x`` so that e^(-dt/(x @ w + offset)) matches ``y``.

    Args:
        x: (n, k) normalized metrics; y: (n,) targets in [0, 1].
        names: the k metric names (keys of the returned weights).
        l2: L2 penalty (added as residuals sqrt(l2) * w; 0 disables it).
        dt: time since last access at annotation (sec. 3.4: 1).
        p0: initial weights (default all ones, as the paper).
        offset: fixed contribution to S (stage 2: the stage-1 terms).
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] != y.shape[0] or x.shape[1] != len(names):
        raise ValueError(f"x {x.shape}, y {y.shape} and names {list(names)} do not match")
    if x.shape[0] < x.shape[1]:
        raise ValueError(f"need at least {x.shape[1]} examples to fit {list(names)}, got {len(y)}")
    start = np.ones(x.shape[1]) if p0 is None else np.asarray(p0, dtype=np.float64)
    penalty = np.sqrt(l2)

    def residuals(w: np.ndarray) -> np.ndarray:
        fit = predicted_importance(x, w, offset, dt) - y
        return np.concatenate([fit, penalty * w]) if l2 > 0 else fit

    res = least_squares(residuals, start, method="lm")
    mse = float(np.mean((predicted_importance(x, res.x, offset, dt) - y) ** 2))
    weights = {n: float(v) for n, v in zip(names, res.x, strict=True)}
    return FitResult(
        weights,
        float(res.cost),
        len(y),
        int(res.nfev),
        bool(res.success),
        str(res.message),
        l2,
        mse,
    )


@dataclass
class PairTable:
    """Raw metrics and importance targets of annotated utterance pairs."""

    ids: list[str] = field(default_factory=list)
    raw: dict[str, list[float]] = field(default_factory=lambda: {m: [] for m in METRICS})
    target: list[float] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.ids)

    def matrix(self, names: Sequence[str], bounds: Mapping[str, tuple[float, float]]) -> np.ndarray:
        """Return the (n, len(names)) matrix of min-max normalized metrics."""
        cols = []
        for name in names:
            lo, hi = bounds[name]
            cols.append((np.asarray(self.raw[name], dtype=np.float64) - lo) / (hi - lo))
        return np.stack(cols, axis=1) if cols else np.zeros((len(self), 0))


def calibrate(table: PairTable, names: Iterable[str] = METRICS) -> dict[str, tuple[float, float]]:
    """Return min-max bounds of each metric on ``table`` (sec. 3.2); a constant column -> +1."""
    out = {}
    for name in names:
        values = np.asarray(table.raw[name], dtype=np.float64)
        lo, hi = (float(values.min()), float(values.max())) if values.size else (0.0, 1.0)
        out[name] = (lo, hi if hi > lo else lo + 1.0)
    return out


def _target(labels: Mapping[str, Any]) -> float | None:
    votes = [float(v) for v in dict(labels.get("importance") or {}).values() if v is not None]
    return sum(votes) / len(votes) if votes else None


@dataclass(frozen=True)
class ReplayedPair:
    """An annotated utterance pair after replay: texts, target and end-of-session counters."""

    pair_id: str
    target: float
    user: str
    context: str
    key_summary: str
    r1: int
    r2: int


def replay_pairs(episodes: Iterable[Episode], replay: LufyFamilyMemory) -> list[ReplayedPair]:
    """Replay episodes through ``replay`` and return every annotated pair with its R1/R2 counts.

    Every bot turn after the first triggers a recall with the dialogue so far (as the live chatbot
    did); after each session its pairs' counters are read from the snapshot (annotation happens
    right after the conversation, sec. 3.4). The key summary is the profile before the session.
    Each episode's texts are embedded in one batch first (``prefetch_episode``: the pairs
    written, the user turns recalls retrieve with; not its questions, which no replay asks),
    not in two small batches per session; only the summaries written on the way come later.
    """
    out = []
    for episode in episodes:
        replay.reset(episode)
        replay.prefetch_episode(dataclasses.replace(episode, qa=()))
        for session in episode.sessions:
            key_summary = replay.key_summary()
            replay_recalls(replay, episode, session, replay.user)
            replay.observe(session)
            turns = {t.turn_id: t for t in session.turns}
            for item in replay.snapshot():
                if item.kind != "utterance_pair" or item.attrs.get("session") != session.index:
                    continue
                user = turns[item.source_ids[0]]
                target = _target(user.labels)
                if target is None:
                    continue
                context = turns[item.source_ids[1]].text if len(item.source_ids) > 1 else ""
                counts = item.attrs["metrics"]
                out.append(
                    ReplayedPair(
                        user.turn_id,
                        target,
                        user.text,
                        context,
                        key_summary,
                        int(counts["R1"]),
                        int(counts["R2"]),
                    )
                )
    return out


def collect_pairs(
    episodes: Iterable[Episode],
    lufy: Lufy,
    replay: LufyFamilyMemory,
    max_pairs: int | None = None,
    seed: int = 0,
) -> PairTable:
    """Replay ``episodes`` (``replay_pairs``), sample ``max_pairs`` and score them with ``lufy``.

    The sample is uniform over every annotated pair (seeded), so it spans users and sessions;
    A, P and L are computed only for it (P, a causal LM's perplexity, is the slow one).
    """
    pairs = replay_pairs(episodes, replay)
    if max_pairs is not None and len(pairs) > max_pairs:
        keep = sorted(random.Random(seed).sample(range(len(pairs)), max_pairs))
        pairs = [pairs[i] for i in keep]
    raw = lufy.raw_metrics(
        [p.user for p in pairs],
        [p.context for p in pairs],
        [p.key_summary for p in pairs],
        need=("A", "P", "L"),
    )
    table = PairTable()
    for k, pair in enumerate(pairs):
        table.ids.append(pair.pair_id)
        table.target.append(pair.target)
        for m in ("A", "P", "L"):
            value = raw[m][k]
            if value is None:  # raw_metrics computes every metric in ``need``
                raise RuntimeError(f"lufy fit: metric {m} missing for pair {pair.pair_id}")
            table.raw[m].append(float(value))
        table.raw["R1"].append(float(pair.r1))
        table.raw["R2"].append(float(pair.r2))
    return table


def fit_two_stage(
    stage1: PairTable,
    stage2: PairTable,
    bounds: Mapping[str, tuple[float, float]],
    *,
    l2: float = 1e-3,
) -> dict[str, JSONValue]:
    """Fit (wA, wP, wL) on ``stage1``, then (wR1, wR2) on ``stage2`` with the first fixed."""
    first = ("A", "P", "L")
    fit1 = fit_weights(stage1.matrix(first, bounds), np.asarray(stage1.target), first, l2=l2)
    w1 = np.array([fit1.weights[m] for m in first])
    offset = stage2.matrix(first, bounds) @ w1
    second = ("R1", "R2")
    fit2 = fit_weights(
        stage2.matrix(second, bounds), np.asarray(stage2.target), second, l2=l2, offset=offset
    )
    weights = fit1.weights | fit2.weights
    return {
        "weights": dict[str, JSONValue](weights),
        "paper": dict(PAPER_WEIGHTS),
        "stage1": fit1.to_dict(),
        "stage2": fit2.to_dict(),
        "bounds": {k: list(v) for k, v in bounds.items()},
        "n_stage1": len(stage1),
        "n_stage2": len(stage2),
    }
