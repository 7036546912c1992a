"""Mem0's B1 and F1 (evaluation/metrics/utils.py) against values worked out by hand, and the
offline NLTK word tokenizer they rest on (Punkt sentences, then NLTK's Treebank tokenizer)."""

from __future__ import annotations

import math

import pytest
from nltk.tokenize import NLTKWordTokenizer

from recallbench.protocols.locomo import item_values, mem0_b1, mem0_f1, score_locomo
from recallbench.protocols.locomo._nltk_tokenize import nltk_word_tokenize
from recallbench.records import Prediction


def test_word_tokenize_splits_sentences_first():
    # Punkt ends the sentence at "home." (so its period is a token) but not at the abbreviation
    # "dr."; without the sentence split NLTK's word tokenizer keeps "home." whole
    text = "dr. smith went home. he left."
    assert nltk_word_tokenize(text) == ["dr.", "smith", "went", "home", ".", "he", "left", "."]
    assert NLTKWordTokenizer().tokenize(text)[3] == "home."
    assert nltk_word_tokenize("") == []


def test_word_tokenize_is_nltks_treebank_within_a_sentence():
    text = "she didn't adopt a cat, she adopted 2 dogs!"
    assert nltk_word_tokenize(text) == NLTKWordTokenizer().tokenize(text)
    assert "n't" in nltk_word_tokenize(text)


@pytest.mark.parametrize(
    ("prediction", "answer", "expected"),
    [
        # Mem0's own example (sec. 3.2): alice, born, in, "." match 4 of 6; equal lengths: BP 1
        ("Alice is born in July.", "Alice was born in March.", 4 / 6),
        # hypothesis longer than the answer: no brevity penalty; 1 of 4 tokens matches
        ("in Lisbon, Portugal", "Lisbon", 1 / 4),
        # hypothesis shorter: precision 1, brevity penalty exp(1 - 4/1)
        ("Lisbon", "in Lisbon, Portugal", math.exp(-3)),
        ("LISBON", "lisbon", 1.0),  # both lower-cased
        ("Oslo", "Lisbon", 0.0),
        ("", "Lisbon", 0.0),
    ],
)
def test_b1_by_hand(prediction, answer, expected):
    assert mem0_b1(prediction, answer) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("prediction", "answer", "expected"),
    [
        ("Alice is born in July.", "Alice was born in March.", 3 / 5),  # sets of 5 and 5, 3 shared
        ("the the cat", "cat cat", 2 / 3),  # sets: {the, cat} vs {cat}; no article removal
        ("running dogs", "dog runs", 0.0),  # no stemming (LoCoMo's F1 gives 1.0)
        ("Yes! Paris, France.", "paris france", 0.8),  # . , ! ? are spaces: P 2/3, R 2/2
        ("", "Paris", 0.0),
        ("   ", "Paris", 0.0),
    ],
)
def test_mem0_f1_by_hand(prediction, answer, expected):
    assert mem0_f1(prediction, answer) == pytest.approx(expected)


def _answer(category: int, output: str, reference: str) -> Prediction:
    return Prediction(
        pred_id="p",
        episode_id="locomo/conv-1",
        session_index=1,
        kind="answer",
        prompt_hash="h",
        output=output,
        reference=reference,
        meta={"category": category, "evidence": []},
    )


def test_item_values_score_b1_and_mem0_f1_on_categories_1_to_4_only():
    got = item_values(_answer(4, "Alice is born in July.", "Alice was born in March."))
    assert got["b1"] == pytest.approx(4 / 6) and got["f1_mem0"] == pytest.approx(3 / 5)
    bait = item_values(_answer(5, "Not mentioned in the conversation", "whatever"))
    assert "b1" not in bait and "f1_mem0" not in bait and bait["f1"] == 1.0


def test_summary_pools_b1_and_mem0_f1_over_categories_1_to_4():
    preds = [
        _answer(4, "Alice is born in July.", "Alice was born in March."),
        _answer(5, "Not mentioned in the conversation", "whatever"),
        _answer(1, "Lisbon", "Lisbon"),
    ]
    _, summary = score_locomo(preds)
    m = summary["metrics"]
    assert m["b1"]["n"] == 2 and m["b1"]["value"] == pytest.approx((4 / 6 + 1) / 2)
    assert m["f1_mem0"]["value"] == pytest.approx((3 / 5 + 1) / 2)
    assert m["f1"]["n"] == 3  # LoCoMo's F1 scores category 5 too
