"""Lexical metrics: tables of (inputs, expected) checked by hand or against the reference library."""

from __future__ import annotations

import math

import pytest

from recallbench.metrics import get_metric
from recallbench.metrics.bleu import CorpusBLEU, SentenceBLEU
from recallbench.metrics.lexical import Distinct, RougeL
from recallbench.text import normalize_answer

CAT, CAT_REF = "the cat is on the mat", "there is a cat on the mat"


@pytest.mark.parametrize(
    "text,expected",
    [
        ("The QUICK, brown-fox's a dog!", "quick brown fox s dog"),
        ("An apple; the pear.", "apple pear"),
        ("  theatre  anthem  ", "theatre anthem"),  # articles only as whole words
        ("", ""),
    ],
)
def test_normalize_answer(text, expected):
    assert normalize_answer(text) == expected


@pytest.mark.parametrize(
    "pred,ref,expected",
    [
        ("The cat sat.", "a cat sat down", 0.8),  # P = 2/2, R = 2/3
        ("cat cat dog", "cat dog dog", 2 / 3),  # multiset overlap {cat, dog}: P = R = 2/3
        ("hello", ["bye", "Hello!"], 1.0),  # max over references
        ("an apple", "the apple", 1.0),  # articles removed
        ("", "anything", 0.0),
        ("completely different", "nothing shared", 0.0),
    ],
)
def test_token_f1_by_hand(pred, ref, expected):
    result = get_metric("token_f1").compute([pred], [ref])
    assert result.items == [pytest.approx(expected)]
    assert result.value == pytest.approx(expected)


def test_distinct_by_hand():
    texts = ["x y x y", "z w"]
    refs = ["", ""]
    # unigrams x y x y z w: 4 distinct / 6; bigrams xy yx xy zw: 3 distinct / 4
    assert get_metric("distinct1").compute(texts, refs).value == pytest.approx(4 / 6)
    assert get_metric("distinct2").compute(texts, refs).value == pytest.approx(3 / 4)
    # CareCall's / Li et al.'s denominator: words
    assert Distinct(2, "words").compute(texts, refs).value == pytest.approx(3 / 6)
    # normalization: "The cat." == "the cat" -> one distinct unigram of 2; no bigrams
    assert get_metric("distinct1").compute(["The cat.", "the cat"], refs).value == 0.5
    assert get_metric("distinct2").compute(["The cat.", "the cat"], refs).value == 0.0


@pytest.mark.parametrize(
    "stem,pred,ref,expected",
    [
        # LCS(the cat sat on the mat, the cat lay on a mat) = the cat on mat: P = R = 4/6
        (False, "the cat sat on the mat", "the cat lay on a mat", 4 / 6),
        # stems run dog vs the dog run: LCS 1, P = 1/2, R = 1/3, F = 0.4
        (True, "running dogs", "the dog runs", 0.4),
        (False, "running dogs", "the dog runs", 0.0),
        (False, "The Cat!", "the cat", 1.0),  # rouge-score lowercases, drops punctuation
    ],
)
def test_rouge_l_by_hand(stem, pred, ref, expected):
    assert RougeL(use_stemmer=stem).compute([pred], [ref]).value == pytest.approx(expected)


def test_corpus_bleu1_by_hand():
    # 5 of 6 unigrams match (clipped 'the'); BP = exp(1 - 7/6)
    expected = 5 / 6 * math.exp(1 - 7 / 6)
    result = get_metric("bleu1").compute([CAT], [CAT_REF])
    assert result.value == pytest.approx(expected, abs=1e-6)
    assert "tok:13a" in result.meta["signature"]


def test_corpus_bleu4_matches_sacrebleu_and_is_not_the_mean_of_items():
    import sacrebleu

    preds = [CAT, "we should meet for coffee again next week", "ok"]
    refs = [CAT_REF, "let us meet again for coffee next week", "okay then"]
    lib = sacrebleu.corpus_bleu(preds, [refs]).score / 100
    result = get_metric("bleu4").compute(preds, refs)
    assert result.value == pytest.approx(lib, abs=1e-9)
    assert result.value != pytest.approx(sum(result.items) / 3, abs=1e-3)
    sent = sacrebleu.sentence_bleu(preds[1], [refs[1]]).score / 100
    assert result.items[1] == pytest.approx(sent, abs=1e-9)


def test_corpus_bleu_multi_reference():
    preds = ["a b c d e", "v w x y z"]
    refs = [["no match here", "a b c d e"], ["v w x y z"]]  # unequal reference counts
    assert CorpusBLEU(4).compute(preds, refs).value == pytest.approx(1.0)


@pytest.mark.parametrize(
    "order,expected",
    [
        # ParlAI tokens: pred [cat is on mat], ref [there is cat on mat]; BP = exp(1 - 5/4)
        (1, math.exp(-0.25)),
        # bigram precision 1/3 (on mat): sqrt(1 * 1/3) * BP
        (2, math.sqrt(1 / 3) * math.exp(-0.25)),
    ],
)
def test_sentence_bleu_by_hand(order, expected):
    assert SentenceBLEU(order).compute([CAT], [CAT_REF]).value == pytest.approx(expected, abs=1e-9)


def test_sentence_bleu_matches_nltk_and_is_practically_unsmoothed():
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    want = sentence_bleu(
        [["there", "is", "cat", "on", "mat"]],
        ["cat", "is", "on", "mat"],
        weights=(0.25,) * 4,
        smoothing_function=SmoothingFunction(epsilon=1e-12).method1,
    )
    assert get_metric("sbleu4").compute([CAT], [CAT_REF]).value == pytest.approx(want)
    assert get_metric("sbleu2").compute(["cat dog"], ["dog cat"]).value < 1e-5


def test_bleu_variants_differ_on_the_same_pair():
    corpus = get_metric("bleu2").compute([CAT], [CAT_REF]).value
    sentence = get_metric("sbleu2").compute([CAT], [CAT_REF]).value
    assert corpus == pytest.approx(0.4887, abs=1e-4)  # sacrebleu keeps articles and case
    assert sentence == pytest.approx(0.4496, abs=1e-4)
