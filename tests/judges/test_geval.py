"""The G-Eval judge task (THEANINE Fig. 26): the verbatim prompt, the strict parser and the
offline twin (the head-to-head comparison is tested in tests/papers/test_head_to_head.py)."""

from __future__ import annotations

import pytest

from recallbench.judges.geval import GEVAL_PROMPT, GEVAL_TASK, offline_choice, parse_choice
from recallbench.llm import ParseError


def test_prompt_and_parser():
    assert GEVAL_PROMPT.startswith("Your task is to choose a more helpful MEMORY")
    msg = GEVAL_TASK.render(
        speaker="Speaker B", current_dialogue_context="c", memory1="m1", memory2="m2"
    )
    assert "enabling the Speaker B to respond" in msg[0]["content"]
    assert parse_choice('Explanation: x. Choice: "2"') == "2"
    assert parse_choice("Choice: Tie") == "tie"
    with pytest.raises(ParseError):
        parse_choice("Memory 1 is better.")
    with pytest.raises(ParseError):
        parse_choice("Choice: 12")


def test_offline_choice_prefers_words_of_the_last_utterance_then_the_context():
    last, context = "Did you take the dog hiking?", "We talked about the bakery."
    # memory 1 shares "dog" and "hiking" with the last utterance, memory 2 only "bakery"
    assert offline_choice(last, context, "B hikes with the dog.", "A runs a bakery.").endswith(
        "Choice: 1"
    )
    assert offline_choice(last, context, "A runs a bakery.", "nothing").endswith("Choice: 1")
    assert offline_choice(last, context, "nothing", "nothing else").endswith("Choice: tie")
    assert parse_choice(offline_choice(last, context, "x", "B hikes with the dog.")) == "2"
