"""LoCoMo's answer F1 (``task_eval/evaluation.py`` of snap-research/locomo) and recall@k.

Followed line by line (the authors' ``eval_question_answering``):

- normalisation ``normalize_answer``: drop commas, lower-case, strip ASCII punctuation, remove
  the words a/an/the/and, collapse whitespace; tokens are split on whitespace and Porter-stemmed
  (NLTK's ``PorterStemmer``, ``recallbench.text.porter_stem``);
- ``f1_score``: token F1 of the stemmed bags (multiset overlap; 0 when nothing is shared);
- category 1 (multi-hop): ``f1`` - prediction and answer are split on commas, each answer part
  scores its best prediction part, and the parts' scores are averaged;
- categories 2, 3, 4: ``f1_score``; category 3's answer is cut at its first ``;`` first (the
  release appends the rationale after it);
- category 5 (adversarial): 1 when the lower-cased reply contains "no information available" or
  "not mentioned", else 0.

Recall@k (``recall_at``): the share of a question's evidence turns among the source turns of the
first k recalled items (the authors' ``recall_acc`` reads the whole retrieved context; k=None is
that). A question without evidence is not scored here. The authors do two different things:
their per-question scorer (``task_eval/evaluation.py``) gives it recall 1, and their aggregate
(``task_eval/evaluation_stats.py``, ``analyze_aggr_acc`` with ``rag=True``) adds recall only for
questions with evidence but divides by every question of the category, so there it counts 0.
Neither is followed (1 would credit every method for the 4 such questions, 0 would charge it);
a deviation, named in the protocol's docstring.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

from recallbench.text import porter_stem

_PUNCT = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
ADVERSARIAL_CREDIT = ("no information available", "not mentioned")


def normalize_answer(text: str) -> str:
    """LoCoMo's ``normalize_answer``: no commas, lower case, no punctuation or articles."""
    text = text.replace(",", "").lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _tokens(text: str) -> list[str]:
    return [porter_stem(w) for w in normalize_answer(text).split()]


def f1_score(prediction: str, ground_truth: str) -> float:
    """Token F1 of the normalised, stemmed prediction and answer (LoCoMo's ``f1_score``)."""
    pred, gold = _tokens(prediction), _tokens(ground_truth)
    same = sum((Counter(pred) & Counter(gold)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def f1_multi(prediction: str, ground_truth: str) -> float:
    """LoCoMo's multi-answer ``f1``: mean over answer parts of the best prediction part's F1."""
    preds = [p.strip() for p in prediction.split(",")]
    golds = [g.strip() for g in ground_truth.split(",")]
    return sum(max(f1_score(p, g) for p in preds) for g in golds) / len(golds)


def adversarial_credit(prediction: str) -> float:
    """1 when the reply says the conversation does not say (LoCoMo's category-5 rule)."""
    low = prediction.lower()
    return 1.0 if any(phrase in low for phrase in ADVERSARIAL_CREDIT) else 0.0


def locomo_f1(category: int, prediction: str, answer: str) -> float:
    """Score one reply as LoCoMo's evaluation scores its category."""
    if category == 5:
        return adversarial_credit(prediction)
    if category == 1:
        return f1_multi(prediction, answer)
    if category == 3:
        answer = answer.split(";")[0].strip()
    if category in (2, 3, 4):
        return f1_score(prediction, answer)
    raise ValueError(f"LoCoMo category must be 1-5, got {category!r}")


def recall_at(
    evidence: Sequence[str], recalled: Sequence[Sequence[str]], k: int | None
) -> float | None:
    """Share of ``evidence`` among the sources of the first ``k`` recalled items (None: all).

    ``recalled`` lists each recalled item's source turn ids in recall order. None when the
    question has no evidence (not scored).
    """
    if not evidence:
        return None
    items = recalled if k is None else recalled[:k]
    seen = {s for sources in items for s in sources}
    return sum(1 for e in evidence if e in seen) / len(evidence)
