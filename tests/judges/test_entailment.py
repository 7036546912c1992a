"""Entailment judge (THEANINE Fig. 6/14 stand-in): unavailable offline, exact labels online."""

from __future__ import annotations

from datetime import datetime

import pytest

from recallbench.judges.entailment import (
    ENTAILMENT_TASK,
    judge_entailment,
    parse_entailment,
    speaker_information,
)
from recallbench.llm import LLM, Completion, ParseError, build_llm
from recallbench.records import Episode, Prediction, Session, Turn
from recallbench.testing.backend import ReplyBackend

A, B = "Speaker A", "Speaker B"


def episode() -> Episode:
    s1 = Session(
        "e/s1",
        1,
        datetime(2023, 1, 1),
        (Turn("e/s1/t0", A, "Hi"),),
        {"summary": ["Speaker B has a dog named Max."]},
    )
    s2 = Session(
        "e/s2",
        2,
        datetime(2023, 1, 8),
        (Turn("e/s2/t0", A, "How is Max?"), Turn("e/s2/t1", B, "Great!")),
    )
    return Episode("e", "toy", (A, B), (s1, s2))


PREDS = [
    Prediction("e/s2/t1/response", "e", 2, "response", "h", "My cat Max is great."),
    Prediction("e/s1/t0/response", "e", 1, "response", "h", "Hello"),  # no past: not judged
]


class Replies(ReplyBackend):
    name, local, offline, is_async, model, context_length = "script", True, False, False, "s", 999

    def __init__(self, reply):
        self.reply, self.prompts = reply, []

    def complete(self, messages, dec):
        self.prompts.append(messages[-1]["content"])
        return Completion(self.reply, 10, 1, 0.0)

    def count_tokens(self, text):
        return len(text.split())

    def close(self):
        pass


def test_offline_is_unavailable_not_faked():
    res = judge_entailment(PREDS, [episode()], build_llm({"backend": "extractive"}))
    assert res.summary["available"] is False and "unavailable offline" in res.summary["reason"]
    assert res.rows == [] and ENTAILMENT_TASK.offline is None


@pytest.mark.parametrize(
    ("reply", "label"),
    [("Contradictory", "contradict"), ("**Entail**", "entail"), ("neutral.", "neutral")],
)
def test_llm_labels_and_rates(reply, label):
    backend = Replies(reply)
    res = judge_entailment(PREDS, [episode()], LLM(backend))
    assert [r["label"] for r in res.rows] == [label] and res.summary[label] == 1.0
    assert "[Session 1] Speaker B has a dog named Max." in backend.prompts[0]
    assert "Response\nMy cat Max is great." in backend.prompts[0]


def test_parser_is_exact():
    with pytest.raises(ParseError):
        parse_entailment("It is entailed, I think")
    res = judge_entailment(PREDS, [episode()], LLM(Replies("Maybe neutral?")))
    assert res.summary["n"] == 0 and res.summary["unparsed"] == 1
    assert speaker_information(episode(), 1) == ""
