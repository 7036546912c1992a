"""The lexical judge: a table of (question, label answer, answer, expected C.1 label)."""

from __future__ import annotations

import pytest

from recallbench.judges.lexical import LexicalJudge, is_dont_know
from recallbench.text import answer_words as words
from recallbench.text import light_stem as stem

Q_HOBBY = "What is Zoe's hobby?"
CASES = [
    # correct: exact, paraphrased around, partly correct, compound split, typo, number words
    ("What is the name of Zoe's dog?", "Biscuit.", "Her dog is called Biscuit!", 1),
    (Q_HOBBY, "Riding motor cycles.", "She likes to ride motorcycles on weekends.", 1),
    ("Which beer did Zoe recommend?", "Sapporo classic.", "Zoe: beer, Sappolo is the best", 1),
    ("How old is Zoe?", "23 years old", "She is twenty three.", 1),
    ("How many cats does Zoe have?", "Two cats", "Zoe has 2 cats at home.", 1),
    ("Does Zoe have a sister?", "Yes.", "Yes, she has one.", 1),
    # hedged but containing the answer: correct wins over don't-know
    ("Where does Zoe work?", "At a bakery", "I'm not sure, maybe a bakery?", 1),
    # incorrect: other content, wrong number, only the question restated
    (Q_HOBBY, "Riding motor cycles.", "She plays tennis.", 0),
    ("How old is Zoe?", "23 years old", "Zoe is 32 years old.", 0),
    ("What is the name of Zoe's dog?", "Biscuit.", "Zoe's dog has a name.", 0),
    ("Does Zoe have a sister?", "Yes.", "No, she does not.", 0),
    # don't-know: explicit phrases, empty, nothing but function words
    (Q_HOBBY, "Riding motor cycles.", "I don't know.", 2),
    (Q_HOBBY, "Riding motor cycles.", "Sorry, I do not have any information about that.", 2),
    (Q_HOBBY, "Riding motor cycles.", "No information found", 2),
    (Q_HOBBY, "Riding motor cycles.", "", 2),
    (Q_HOBBY, "Riding motor cycles.", "Well, it is what it is.", 2),
    # a don't-know phrase later in a real answer is not a don't-know
    (Q_HOBBY, "Riding motor cycles.", "She said she doesn't know how to swim.", 0),
]


@pytest.mark.parametrize(("question", "label", "answer", "expected"), CASES)
def test_lexical_table(question, label, answer, expected):
    verdict = LexicalJudge().judge(question, label, answer)
    assert verdict.label == expected, verdict.info
    assert verdict.raw == str(expected)


def test_threshold_and_fuzzy_settings():
    q, label = "What does Zoe collect?", "Old stamps and coins"
    answer = "She collects stamps."  # key: old, stamp, coin -> 1 of 3 matched
    assert LexicalJudge(threshold=0.5).judge(q, label, answer).label == 0
    assert LexicalJudge(threshold=0.3).judge(q, label, answer).label == 1
    typo = ("Which beer?", "Sapporo", "Sappolo")
    assert LexicalJudge(fuzzy=1.0).judge(*typo).label == 0
    with pytest.raises(ValueError, match="threshold"):
        LexicalJudge(threshold=0)


def test_normalization_helpers():
    assert words("Zoe's 1,000 twenty-one dogs, a hundred") == ["zoe", "1000", "21", "dogs", "100"]
    assert [stem(w) for w in ("riding", "ride", "cycles", "families", "stopped")] == [
        "rid",
        "rid",
        "cycl",
        "family",
        "stop",
    ]
    assert is_dont_know("  Hmm, I can't remember. ") and not is_dont_know("Biscuit")
