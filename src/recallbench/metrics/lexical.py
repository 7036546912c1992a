"""Word-overlap metrics: token F1, ROUGE-L, Distinct-n.

Tokenization follows ParlAI's ``normalize_answer`` (lowercase; punctuation -> space; drop the
articles a/an/the; split on whitespace) for token F1 and Distinct-n, the convention of the
PPL / BLEU-1/2 / F1 / Distinct-1/2 metric set reported by Keep Me Updated! (CareCall, Table 4/6).
ROUGE-L uses the rouge-score package's own tokenizer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from recallbench.metrics.base import Metric, MetricResult, Reference, check_inputs, mean
from recallbench.text import parlai_tokens as tokens
from recallbench.verdict import JSONValue


def f1_tokens(pred: list[str], gold: list[str]) -> float:
    """Unigram F1 of two token lists with multiset overlap (0 when nothing overlaps)."""
    same = sum((Counter(pred) & Counter(gold)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(gold)
    return 2 * precision * recall / (precision + recall)


class TokenF1(Metric):
    """Unigram F1 between prediction and reference after ParlAI normalization.

    Input: aligned predictions and references (str, or a list of str: the max over references).
    Range: [0, 1]; items are per-pair F1, value is their mean. Empty prediction -> 0.
    """

    name = "token_f1"
    description = __doc__

    def compute(self, predictions: Sequence[str], references: Sequence[Reference]) -> MetricResult:
        preds, refs = check_inputs(self.name, predictions, references)
        items = [
            max(f1_tokens(tokens(p), tokens(r)) for r in rs)
            for p, rs in zip(preds, refs, strict=True)
        ]
        meta: dict[str, JSONValue] = {
            "tokenization": "ParlAI normalize_answer",
            "aggregate": "mean",
            "n": len(items),
        }
        return MetricResult(mean(items), items, meta)


class RougeL(Metric):
    """ROUGE-L F-measure (longest common subsequence) from Google's rouge-score package.

    Input: aligned predictions and references (several references: the best F-measure).
    Range: [0, 1]; items are per-pair F-measures, value is their mean (no bootstrap).
    Tokenization: rouge-score's default (lowercase; only [a-z0-9] kept, so non-Latin text such
    as Korean scores 0). Stemming: off by default, as in ``evaluate.load("rouge")``;
    ``use_stemmer=True`` applies the Porter stemmer (the ROUGE-1.5.5 ``-m`` flag).
    """

    name = "rouge_l"
    description = __doc__

    def __init__(self, use_stemmer: bool = False, name: str = "rouge_l") -> None:
        self.name = name
        self.use_stemmer = use_stemmer

    def compute(self, predictions: Sequence[str], references: Sequence[Reference]) -> MetricResult:
        # rouge-score (it imports NLTK: 1.3 s) on first use, not when the registry is imported
        from rouge_score import rouge_scorer

        scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=self.use_stemmer)
        preds, refs = check_inputs(self.name, predictions, references)
        items = [
            float(scorer.score_multi(rs, p)["rougeL"].fmeasure) if p.strip() else 0.0
            for p, rs in zip(preds, refs, strict=True)
        ]
        meta: dict[str, JSONValue] = {
            "implementation": "rouge-score rougeL F-measure",
            "use_stemmer": self.use_stemmer,
            "aggregate": "mean",
            "n": len(items),
        }
        return MetricResult(mean(items), items, meta)


def distinct_n(texts: Sequence[str], n: int, denominator: str = "ngrams") -> float:
    """Distinct n-grams over all n-grams (or all words) in ``texts``; 0 when there are none."""
    counts: Counter[tuple[str, ...]] = Counter()
    words = 0
    for text in texts:
        toks = tokens(text)
        words += len(toks)
        counts.update(tuple(toks[i : i + n]) for i in range(len(toks) - n + 1))
    total = sum(counts.values()) if denominator == "ngrams" else words
    return len(counts) / total if total else 0.0


class Distinct(Metric):
    """Distinct-n (Li et al., 2016): distinct n-grams / total n-grams over all predictions.

    Input: predictions (references are only checked for alignment). Range: [0, 1]; a corpus
    measure of diversity, so ``items`` is None. ParlAI tokenization; with the default
    ``denominator="ngrams"`` this is ParlAI's "interdistinct-n". Li et al. and the CareCall paper
    (Table 1 caption) divide by the number of words: ``denominator="words"``. For n = 1 both are
    equal; for n = 2 "ngrams" is larger by words / (words - sentences).
    """

    identical_is_max = False
    description = __doc__
    bootstrap_note = (
        "no interval: Distinct-n counts unique n-grams, and a resample that repeats an episode "
        "repeats its n-grams, so the bootstrap distribution is biased downward"
    )

    def __init__(self, n: int, denominator: str = "ngrams", name: str | None = None) -> None:
        if n < 1:
            raise ValueError(f"Distinct-n needs n >= 1, got {n}")
        if denominator not in ("ngrams", "words"):
            raise ValueError(f"denominator must be 'ngrams' or 'words', got {denominator!r}")
        self.n = n
        self.denominator = denominator
        self.name = name or f"distinct{n}"

    def compute(self, predictions: Sequence[str], references: Sequence[Reference]) -> MetricResult:
        preds, _ = check_inputs(self.name, predictions, references)
        value = distinct_n(preds, self.n, self.denominator)
        meta: dict[str, JSONValue] = {
            "tokenization": "ParlAI normalize_answer",
            "denominator": f"total {self.denominator}",
            "n": len(preds),
        }
        return MetricResult(value, None, meta)

    def clustered(
        self,
        result: MetricResult,
        predictions: Sequence[str],
        references: Sequence[Reference],
        clusters: Sequence[str],
    ) -> None:
        """No episode bootstrap for a count of unique n-grams (see ``bootstrap_note``)."""
        return None
