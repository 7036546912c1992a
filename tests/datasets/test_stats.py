"""Dataset statistics (of LUFY Table 1 and CareCall Table 1) against hand-computed values."""

from __future__ import annotations

import math

import pytest

from recallbench.datasets.stats import carecall_stats, conversation_stats, distinct_n
from recallbench.errors import DatasetFormatError
from recallbench.records import Episode, Session, Turn
from recallbench.text import tokenize


def _episode(eid: str, sessions: list[list[str]], gold: list[dict] | None = None) -> Episode:
    gold = gold or [{} for _ in sessions]
    built = tuple(
        Session(
            f"{eid}/s{i}",
            i,
            None,
            tuple(Turn(f"{eid}/s{i}/t{j}", "AB"[j % 2], text) for j, text in enumerate(texts)),
            g,
        )
        for i, (texts, g) in enumerate(zip(sessions, gold, strict=True), start=1)
    )
    return Episode(eid, "toy", ("A", "B"), built)


ENGLISH = [
    _episode("e1", [["Hello there!", "I'm fine, thanks."], ["  ", "Good-bye now"]]),
    _episode("e2", [["one two three"]]),
]


@pytest.mark.parametrize(
    ("text", "tokenizer", "expected"),
    [
        ("  I'm fine, thanks. ", "whitespace", ["I'm", "fine,", "thanks."]),
        ("  I'm fine, thanks. ", "word", ["I", "m", "fine", "thanks"]),
        ("어르신 잘 지내요?", "whitespace", ["어르신", "잘", "지내요?"]),
        ("어르신 잘 지내요?", "word", ["어르신", "잘", "지내요"]),
        ("   ", "whitespace", []),
    ],
)
def test_tokenizers(text, tokenizer, expected):
    assert tokenize(text, tokenizer) == expected


def test_unknown_tokenizer_suggests():
    with pytest.raises(KeyError, match="Did you mean 'word'"):
        tokenize("a b", "words")


def test_conversation_stats_by_hand():
    # words (whitespace): 2 + 3 + 0 + 2 + 3 = 10; (word): 2 + 4 + 0 + 3 + 3 = 12
    ws = conversation_stats(ENGLISH, "whitespace")
    assert (ws.conversations, ws.sessions, ws.turns, ws.words) == (2, 3, 5, 10)
    assert ws.avg_turns == 2.5 and ws.avg_words == 5.0
    assert ws.avg_turns_per_session == pytest.approx(5 / 3)
    assert ws.avg_words_per_turn == 2.0
    word = conversation_stats(ENGLISH, "word")
    assert word.words == 12 and word.avg_words == 6.0
    assert word.to_dict()["avg_words"] == 6.0 and word.to_dict()["dataset"] == "toy"


def test_stats_are_total_on_empty_input():
    empty = conversation_stats([], "word", dataset="none").to_dict()
    assert empty["avg_turns"] == 0.0 and empty["avg_words_per_turn"] == 0.0
    assert all(v == 0 for k, v in empty.items() if k not in ("dataset", "tokenizer"))
    cc = carecall_stats([])["all"]
    values = [v for k, v in cc.to_dict().items() if k not in ("group", "tokenizer")]
    assert values and all(v == 0 and not math.isnan(v) for v in values)
    assert distinct_n([], 1) == 0.0 and distinct_n([[]], 2) == 0.0


def test_distinct_n_by_hand():
    units = [["a", "b", "a", "b"], ["b", "a"]]
    # 6 words; unigrams {a, b}; bigrams within units {ab, ba} (no bigram across units)
    assert distinct_n(units, 1) == pytest.approx(2 / 6)
    assert distinct_n(units, 2) == pytest.approx(2 / 6)
    assert distinct_n([["x", "y"], ["y", "z"]], 2) == pytest.approx(2 / 4)


KOREAN = [
    _episode(
        "interactive-1",
        [["안녕하세요 어르신", "네 안녕하세요"], ["손녀는 잘 지내요?", "네 잘 지내요"]],
        [
            {"memory": [], "summary": ["손녀가 태어남"]},
            {"memory": ["손녀가 태어남"], "summary": ["잘 지냄", " "]},
        ],
    )
]


def test_carecall_stats_korean_by_hand():
    stats = carecall_stats(KOREAN)  # whitespace (eojeol) tokens
    assert list(stats) == ["all", "session_1", "session_2"]
    a = stats["all"]
    assert (a.sessions, a.turns, a.words) == (2, 4, 10)
    # unigrams: 안녕하세요 어르신 네 손녀는 잘 지내요? 지내요 -> 7 distinct of 10 words
    assert a.unique_words == 7 and a.distinct1 == pytest.approx(0.7)
    # bigrams inside utterances: 안녕하세요+어르신, 네+안녕하세요, 손녀는+잘, 잘+지내요?, 네+잘, 잘+지내요
    assert a.distinct2 == pytest.approx(0.6)
    assert a.avg_turns_per_session == 2.0 and a.avg_words_per_turn == 2.5
    assert a.avg_memory_sentences == 0.5  # 1 memory sentence over 2 sessions
    assert a.avg_summary_sentences == 1.0  # the blank summary sentence is not counted
    assert a.avg_words_per_summary_sentence == 2.0
    assert a.summary_distinct1 == 1.0 and a.summary_distinct2 == 0.5
    s1 = stats["session_1"]
    assert (s1.sessions, s1.turns, s1.words, s1.unique_words) == (1, 2, 4, 3)
    assert s1.distinct1 == 0.75 and s1.avg_memory_sentences == 0.0
    # the word tokenizer drops the '?' so 지내요? and 지내요 merge: 6 distinct
    assert carecall_stats(KOREAN, "word")["all"].unique_words == 6


def test_carecall_stats_rejects_bad_gold():
    bad = [_episode("x", [["a b"]], [{"summary": {"not": "a list"}}])]
    with pytest.raises(DatasetFormatError, match="episode 'x' session 'x/s1'.*summary"):
        carecall_stats(bad)
