"""BLEU in the two variants the papers' numbers come from.

``bleuN`` (N = 1, 2, 4): **corpus** BLEU with up to N-grams, sacrebleu (``BLEU(max_ngram_order=N)``,
13a tokenizer, case-sensitive, "exp" smoothing, which only acts when an n-gram order has no
match in the whole corpus). Value = sacrebleu score / 100. Items = sacrebleu ``sentence_score``
with the same settings plus ``effective_order=True`` (sacrebleu's advice for single sentences).
THEANINE's Bleu-4 (Table 1, printed x100 like sacrebleu) uses this variant.

``sbleuN``: **sentence** BLEU averaged over pairs, NLTK ``sentence_bleu`` as ParlAI computes it
(``BleuMetric``): ParlAI normalization (lowercase, no punctuation, no articles, whitespace
split), uniform weights 1/N over 1..N-grams, ``SmoothingFunction(epsilon=1e-12).method1`` (a
zero n-gram count becomes 1e-12, i.e. practically unsmoothed: a pair without any matching
N-gram scores ~0). CareCall's BLEU-1/2 (Table 4/6, 0-1 scale beside ParlAI-style F1 and PPL)
uses this variant. NLTK's ``bleu_score`` module needs no NLTK data downloads.

Neither paper names its BLEU implementation; the assignment above is our reading of their
scales and metric sets (see conf/metrics/*.yaml) and both variants are always available.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from recallbench.metrics.base import Metric, MetricResult, Reference, check_inputs, mean
from recallbench.text import parlai_tokens as tokens
from recallbench.verdict import JSONValue


def _clip(x: float) -> float:
    # sacrebleu returns 100.00000000000004 for identical corpora.
    return min(1.0, max(0.0, x))


class CorpusBLEU(Metric):
    """Corpus BLEU-N (sacrebleu), 0-1 scale. Input: aligned predictions and references (str or
    list of str: multi-reference BLEU). Range [0, 1]. Identical input gives 1 when every
    sentence has at least N tokens (BLEU-N of a corpus without N-grams is 0)."""

    description = __doc__

    def __init__(self, max_order: int, name: str | None = None) -> None:
        from sacrebleu.metrics import BLEU

        self.max_order = max_order
        self.name = name or f"bleu{max_order}"
        self._corpus = BLEU(max_ngram_order=max_order)
        self._sentence = BLEU(max_ngram_order=max_order, effective_order=True)

    def compute(self, predictions: Sequence[str], references: Sequence[Reference]) -> MetricResult:
        preds, refs = check_inputs(self.name, predictions, references)
        meta: dict[str, JSONValue] = {
            "variant": "corpus",
            "implementation": "sacrebleu",
            "signature": "tok:13a|case:mixed|smooth:exp|eff:no (no predictions scored)",
            "scale": "0-1 (sacrebleu score / 100)",
            "items": "sacrebleu sentence_score, effective_order=True",
            "n": len(preds),
        }
        if not preds:
            return MetricResult(0.0, [], meta)
        width = max(len(rs) for rs in refs)
        # sacrebleu takes one stream per reference slot; None marks a missing reference (its
        # documented convention, though its annotations say str: hence the ignores below).
        streams = [[rs[j] if j < len(rs) else None for rs in refs] for j in range(width)]
        value = _clip(self._corpus.corpus_score(preds, streams).score / 100)  # type: ignore[arg-type]
        meta["signature"] = str(self._corpus.get_signature())
        items = [
            _clip(self._sentence.sentence_score(p, rs).score / 100) if p.strip() else 0.0
            for p, rs in zip(preds, refs, strict=True)
        ]
        # sacrebleu's own segment statistics (what its paired bootstrap resamples): their sums
        # give the corpus value, so episode resampling recomputes corpus BLEU exactly.
        stats = self._corpus._extract_corpus_statistics(preds, streams)  # type: ignore[arg-type]
        spec: dict[str, str | int | float | None] = {"fn": "bleu", "max_order": self.max_order}
        return MetricResult(value, items, meta, stats=stats, estimator=spec)


@functools.cache
def _nltk_bleu() -> tuple[Any, Any]:
    """NLTK's ``sentence_bleu`` and ParlAI's smoothing, loaded on first use: importing NLTK takes
    1.5 s, which every command importing the metric registry paid (a warm ``make reproduce-*``
    only reads run folders)."""
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    return sentence_bleu, SmoothingFunction(epsilon=1e-12).method1


class SentenceBLEU(Metric):
    """Sentence BLEU-N averaged over pairs (NLTK, ParlAI settings), 0-1 scale. Input: aligned
    predictions and references (str or list of str). Range [0, 1]. Empty prediction -> 0."""

    description = __doc__

    def __init__(self, max_order: int, name: str | None = None) -> None:
        self.max_order = max_order
        self.name = name or f"sbleu{max_order}"
        self._weights = tuple([1.0 / max_order] * max_order)

    def _score(self, prediction: str, refs: list[str]) -> float:
        hyp = tokens(prediction)
        if not hyp:
            return 0.0
        ref_tokens = [tokens(r) for r in refs]
        bleu, smooth = _nltk_bleu()
        score = bleu(ref_tokens, hyp, weights=self._weights, smoothing_function=smooth)
        return _clip(float(score))

    def compute(self, predictions: Sequence[str], references: Sequence[Reference]) -> MetricResult:
        preds, refs = check_inputs(self.name, predictions, references)
        items = [self._score(p, rs) for p, rs in zip(preds, refs, strict=True)]
        meta: dict[str, JSONValue] = {
            "variant": "sentence, averaged",
            "implementation": "nltk sentence_bleu (ParlAI BleuMetric settings)",
            "tokenization": "ParlAI normalize_answer",
            "weights": list(self._weights),
            "smoothing": "method1, epsilon=1e-12",
            "n": len(items),
        }
        return MetricResult(mean(items), items, meta)
