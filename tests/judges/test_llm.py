"""The LLM judge: exact-token parsing of C.1 replies, Fig. 6 ratings, the offline twin."""

from __future__ import annotations

import pytest

from recallbench.cli.build import build_judge
from recallbench.judges import JudgeItem, LLMJudge
from recallbench.judges.llm import (
    QA_JUDGE_PROMPT,
    QA_JUDGE_TASK,
    RATING_TASK,
    parse_judge_label,
    parse_rating,
)
from recallbench.llm import ParseError, build_llm
from recallbench.testing.backend import ReplyBackend


@pytest.mark.parametrize(
    ("reply", "label"),
    [("1", 1), ("0", 0), ("2", 2), (" 1\n", 1), ("`2`", 2), ('"0"', 0), ("**1**", 1), ("1.", 1)],
)
def test_parse_exact_tokens(reply, label):
    assert parse_judge_label(reply) == label


@pytest.mark.parametrize(
    "reply", ["10", "Output: 1", "1 (correct)", "12", "one", "", "0 or 1", "3", "1/2", "2.5"]
)
def test_parse_refuses_substrings(reply):
    with pytest.raises(ParseError):
        parse_judge_label(reply)


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ("Score: 4\nReason: the user stays engaged.", 4.0),
        ("**Score:** 3/5. The user answers briefly.", 3.0),
        ("I would give this conversation a score of 3.5 because ...", 3.5),
        ("4 out of 5 - lively and relevant.", 4.0),
        ("5\nThe user is very engaged.", 5.0),
        ("Rating: 2/5; short replies over 12 turns", 2.0),
    ],
)
def test_parse_rating(reply, score):
    assert parse_rating(reply) == score


@pytest.mark.parametrize("reply", ["Engaging overall.", "Score: 7", "I rate it 12 of 20"])
def test_parse_rating_refuses(reply):
    with pytest.raises(ParseError):
        parse_rating(reply)


def test_prompt_is_the_papers_and_renders():
    assert QA_JUDGE_PROMPT.startswith(
        "Judge whether the answer to the following question is correct"
    )
    assert QA_JUDGE_PROMPT.endswith("Only output 1 or 0 or 2, nothing else, no explanation needed.")
    msgs = QA_JUDGE_TASK.render(question="Q?", label_answer="L", answer_to_judge="A")
    assert "Here is the label answer L\n" in msgs[0]["content"]
    assert QA_JUDGE_TASK.stage == "judge" and RATING_TASK.offline is None


class _Backend(ReplyBackend):
    """A scripted replier standing in for a model (used through the real LLM facade)."""

    name, local, offline, is_async, model, context_length = "script", True, False, False, "s", 999

    def __init__(self, replies):
        self.replies = list(replies)

    def complete(self, messages, dec):
        from recallbench.llm import Completion

        return Completion(self.replies.pop(0), 10, 1, 0.0)

    def count_tokens(self, text):
        return len(text.split())

    def close(self):
        pass


def test_llm_judge_parses_and_falls_back():
    from recallbench.llm import LLM

    llm = LLM(_Backend(["1", "Output: 2", "2"]))
    judge = LLMJudge(llm)
    items = [JudgeItem("Q?", "Biscuit", "Biscuit")] * 3
    verdicts = judge.judge_many(items)
    assert [v.label for v in verdicts] == [1, 0, 2]  # unparseable -> fallback 0
    assert verdicts[1].raw == "Output: 2" and not verdicts[1].parsed
    assert verdicts[1].failure.startswith("parse failed")
    assert llm.usage.to_dict()["tasks"]["judge.qa"]["parse_failures"] == 1


def test_offline_twin_is_lexical_through_the_parser():
    judge = build_judge(
        {"name": "llm", "generator": None}, llm=build_llm({"backend": "extractive"})
    )
    verdicts = judge.judge_many(
        [
            JudgeItem("What is Zoe's dog called?", "Biscuit", "Biscuit, her terrier."),
            JudgeItem("What is Zoe's dog called?", "Biscuit", "I don't know."),
            JudgeItem("What is Zoe's dog called?", "Biscuit", "Rex."),
        ]
    )
    assert [(v.label, v.raw, v.parsed) for v in verdicts] == [
        (1, "1", True),
        (2, "2", True),
        (0, "0", True),
    ]
    assert "lexical" in judge.describe()["note"]
    with pytest.raises(ValueError, match="no offline implementation"):
        judge.rate_many([("Zoe", "Luke: hi\nZoe: hello")])


def test_rating_through_scripted_model_and_sampling_rules():
    from recallbench.errors import ConfigError
    from recallbench.llm import LLM

    llm = LLM(_Backend(["Score: 4. Lively.", "No idea what to say.", "3/5", "Score: 5"]))
    judge = LLMJudge(llm)
    got = judge.rate_many([("Zoe", "Luke: hi\nZoe: hello"), ("Ann", "Luke: hi\nAnn: hey")])
    assert [[r.value for r in rs] for rs in got] == [[4.0], [None]]  # unparseable -> None
    two = judge.rate_many([("Zoe", "script")], samples=2, temperature=1.0)
    assert [r.value for r in two[0]] == [3.0, 5.0]
    with pytest.raises(ConfigError, match="temperature"):
        judge.rate_many([("Zoe", "script")], samples=2)
