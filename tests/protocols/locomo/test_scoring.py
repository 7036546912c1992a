"""LoCoMo's answer F1 and recall@k against values worked out by hand (task_eval/evaluation.py)."""

from __future__ import annotations

import pytest

from recallbench.protocols.locomo import (
    adversarial_credit,
    f1_multi,
    f1_score,
    locomo_f1,
    normalize_answer,
    recall_at,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Saturday, before 25 May 2023!", "saturday before 25 may 2023"),
        ("Cats and dogs", "cats dogs"),
        ("an apple-pie", "applepie"),  # punctuation is deleted, not spaced
    ],
)
def test_normalize_answer(text, expected):
    assert normalize_answer(text) == expected


@pytest.mark.parametrize(
    ("prediction", "answer", "expected"),
    [
        ("a red kite", "red kite in the sky", 2 / 3),  # P 2/2, R 2/4
        ("running dogs", "dog runs", 1.0),  # Porter stems: run, dog
        ("the the cat", "cat cat", 2 / 3),  # bags: {cat} vs {cat, cat}
        ("Oslo", "Lisbon", 0.0),
        ("", "Lisbon", 0.0),
    ],
)
def test_f1_score(prediction, answer, expected):
    assert f1_score(prediction, answer) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("prediction", "answer", "expected"),
    [
        ("violin", "violin, chess", 0.5),  # parts: violin 1, chess 0
        ("chess, violin", "violin, chess", 1.0),
        ("chess and violin", "violin, chess", 2 / 3),  # one part {chess, violin} vs each
        ("violin, piano", "violin", 1.0),  # the best prediction part per answer part
    ],
)
def test_multi_hop_is_scored_per_comma_part(prediction, answer, expected):
    assert f1_multi(prediction, answer) == pytest.approx(expected)
    assert locomo_f1(1, prediction, answer) == pytest.approx(expected)


def test_category_rules():
    # category 3 keeps the answer up to its first ';' ("Likely yes" -> like, ye)
    assert locomo_f1(3, "yes", "Likely yes; she has a beagle") == pytest.approx(2 / 3)
    # categories 2 and 4: plain F1 of the whole answer (a comma is dropped, not split)
    assert locomo_f1(4, "violin", "violin, chess") == pytest.approx(2 / 3)
    assert locomo_f1(2, "7 May 2023", "7 May 2023") == 1.0
    with pytest.raises(ValueError, match="1-5"):
        locomo_f1(6, "x", "y")


@pytest.mark.parametrize(
    ("reply", "credit"),
    [
        ("Not mentioned in the conversation", 1.0),
        ("That is not mentioned.", 1.0),
        ("No information available", 1.0),
        ("Pixel", 0.0),
        ("I don't know", 0.0),  # the authors' rule credits only the two phrases
    ],
)
def test_adversarial_credit(reply, credit):
    assert adversarial_credit(reply) == credit
    assert locomo_f1(5, reply, "Not mentioned in the conversation") == credit


def test_recall_at_k_against_evidence():
    recalled = [["a"], ["c", "d"], ["b"]]
    assert recall_at(["a", "b"], recalled, 1) == 0.5
    assert recall_at(["a", "b"], recalled, 2) == 0.5
    assert recall_at(["a", "b"], recalled, 3) == 1.0
    assert recall_at(["a", "b"], recalled, None) == 1.0
    assert recall_at(["d"], recalled, 2) == 1.0  # an item with several source turns
    assert recall_at(["z"], recalled, None) == 0.0
    assert recall_at([], recalled, 5) is None  # no evidence: not scored
