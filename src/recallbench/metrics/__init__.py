"""Response metrics: one explicit dict ``METRICS`` (name -> Metric), ``get_metric`` to look up.

```python
from recallbench.metrics import get_metric
r = get_metric("bleu4").compute(["the cat sat"], ["a cat sat"])   # MetricResult(value, items, meta)
```

| name | what | variant / model | used by |
|---|---|---|---|
| bleu1, bleu2, bleu4 | corpus BLEU-N, 0-1 | sacrebleu 13a, case-sensitive | THEANINE (bleu4) |
| sbleu1, sbleu2, sbleu4 | sentence BLEU-N averaged | NLTK, ParlAI normalization, eps 1e-12 | CareCall (sbleu1/2) |
| rouge_l | ROUGE-L F | rouge-score, no stemming | THEANINE |
| token_f1 | unigram F1 | ParlAI normalization, max over refs | CareCall |
| distinct1, distinct2 | distinct n-grams / n-grams | ParlAI normalization, corpus | CareCall |
| bertscore | BERTScore F1 | MiniLM-L6 layer 6, unrescaled | THEANINE (offline stand-in) |
| bertscore_roberta_large | BERTScore F1 | roberta-large layer 17 (needs the Hub) | THEANINE (original) |
| mauve | MAUVE, mean over 10 k-means seeds (``seed_sd`` beside it) | MiniLM features (not comparable to GPT-2-large) | THEANINE (offline stand-in) |
| mauve_1seed | MAUVE of one k-means fit (mauve-text's seed 25; CPU-dependent) | MiniLM features | comparison with single-fit numbers |
| mauve_gpt2_large | MAUVE | gpt2-large features (needs the Hub) | THEANINE (original) |
| perplexity | PPL of references, given the stored prompt when the protocol keeps it | SmolLM2-135M-Instruct | CareCall |
| perplexity@<model> | the same under another local causal LM (a ``load_causal_lm`` spec) | any | CareCall |

Heavy metrics load their models on first ``compute``. Metric sets per paper: ``conf/metrics/``.
"""

from __future__ import annotations

from recallbench.errors import did_you_mean
from recallbench.metrics.base import Metric, MetricResult
from recallbench.metrics.bertscore import BERTScoreMetric
from recallbench.metrics.bleu import CorpusBLEU, SentenceBLEU
from recallbench.metrics.lexical import Distinct, RougeL, TokenF1
from recallbench.metrics.mauve import MauveMetric
from recallbench.metrics.perplexity import PerplexityMetric, perplexity

__all__ = ["METRICS", "Metric", "MetricResult", "get_metric", "perplexity"]

METRICS: dict[str, Metric] = {
    "bleu1": CorpusBLEU(1),
    "bleu2": CorpusBLEU(2),
    "bleu4": CorpusBLEU(4),
    "sbleu1": SentenceBLEU(1),
    "sbleu2": SentenceBLEU(2),
    "sbleu4": SentenceBLEU(4),
    "rouge_l": RougeL(),
    "token_f1": TokenF1(),
    "distinct1": Distinct(1),
    "distinct2": Distinct(2),
    "bertscore": BERTScoreMetric(),
    "bertscore_roberta_large": BERTScoreMetric("roberta-large", 17, name="bertscore_roberta_large"),
    "mauve": MauveMetric(),
    "mauve_1seed": MauveMetric(seeds=1, name="mauve_1seed"),
    "mauve_gpt2_large": MauveMetric(featurizer="gpt2-large", name="mauve_gpt2_large"),
    "perplexity": PerplexityMetric(),
}


def get_metric(name: str) -> Metric:
    """Return the metric registered as ``name``; a KeyError suggests close names on a miss.

    ``perplexity@<model>`` is the perplexity metric under another local causal LM (a spec for
    ``recallbench.llm.backends.hf.load_causal_lm``), created on first use.
    """
    if name not in METRICS and name.startswith("perplexity@") and name != "perplexity@":
        METRICS[name] = PerplexityMetric(name.partition("@")[2], name=name)
    if name not in METRICS:
        raise did_you_mean("metric", name, METRICS)
    return METRICS[name]
