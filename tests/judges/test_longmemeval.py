"""The LongMemEval judge: the authors' prompts word for word, their 'yes' rule, the offline twin."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from recallbench.cli.build import build_judge
from recallbench.errors import ConfigError, DatasetFormatError
from recallbench.judges import JudgeItem
from recallbench.judges.longmemeval import (
    PAPER_MODEL,
    PROMPT_SOURCE,
    QUESTION_TYPES,
    TEMPLATES,
    LongMemEvalItem,
    LongMemEvalJudge,
    anscheck_prompt,
    branch,
    make_task,
    offline_reply,
    parse_yes,
    reply_exact,
)
from recallbench.llm import LLM, Completion, build_llm
from recallbench.testing.backend import ReplyBackend

# Texts with braces, quotes and a trailing space, so a formatting slip shows.
Q, A, R = "How many days {between} 'A' and B? ", "18 days", "It was 19 days {ish}."


@pytest.fixture(scope="module")
def reference_prompt(real_data_dir: Path):
    """The authors' ``get_anscheck_prompt``, taken from their evaluate_qa.py at test time.

    Only that function is compiled (the module imports openai, backoff and tqdm at the top)."""
    path = real_data_dir / "longmemeval" / "reference" / "evaluate_qa.py"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    fn = next(
        n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_anscheck_prompt"
    )
    space: dict[str, object] = {}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), str(path), "exec"), space)
    return space["get_anscheck_prompt"]


@pytest.mark.parametrize("abstention", [False, True])
@pytest.mark.parametrize("qtype", QUESTION_TYPES)
def test_prompt_equals_the_reference(reference_prompt, qtype, abstention):
    want = reference_prompt(qtype, Q, A, R, abstention=abstention)
    assert anscheck_prompt(qtype, Q, A, R, abstention) == want
    task = make_task(branch(qtype, abstention))
    assert task.render(question=Q, answer=A, response=R) == [{"role": "user", "content": want}]


def test_reference_and_ours_refuse_unknown_types(reference_prompt):
    with pytest.raises(NotImplementedError):
        reference_prompt("open-domain", Q, A, R)
    with pytest.raises(DatasetFormatError, match="unknown question type 'open-domain'"):
        anscheck_prompt("open-domain", Q, A, R)
    # the authors' abstention branch does not look at the type; ours checks it first
    assert reference_prompt("multi-session", Q, A, R, abstention=True) == anscheck_prompt(
        "multi-session", Q, A, R, True
    )


def test_five_templates_and_their_branches():
    assert len(set(TEMPLATES.values())) == 5
    assert {branch(t, False) for t in QUESTION_TYPES} == set(TEMPLATES) - {"abstention"}
    assert all(branch(t, True) == "abstention" for t in QUESTION_TYPES)
    assert "off-by-one errors for the number of days" in TEMPLATES["temporal"]
    assert "Rubric: {answer}" in TEMPLATES["preference"]
    task = make_task("default")
    assert (task.temperature, task.max_tokens, task.stage) == (0.0, 10, "judge")


@pytest.mark.parametrize(
    ("reply", "label", "exact"),
    [
        ("yes", 1, True),
        ("Yes.", 1, True),
        ("  YES\n", 1, True),
        ("no", 0, True),
        ("No.", 0, True),
        ("Yes, the response is correct.", 1, False),
        ("no, not yes", 1, False),  # the authors' substring rule, kept on purpose
        ("The answer is eyes", 1, False),  # ... which also reads 'yes' inside a word
        ("Correct", 0, False),
        ("", 0, False),
    ],
)
def test_the_authors_yes_rule(reply, label, exact):
    assert parse_yes(reply) == label
    assert reply_exact(reply) is exact


@pytest.mark.parametrize(
    ("branch_name", "question", "answer", "response", "reply"),
    [
        ("default", "What did I buy?", "a yellow dress", "You bought a yellow dress.", "yes"),
        ("default", "What did I buy?", "a yellow dress", "A blue hat.", "no"),
        ("temporal", "How many days?", "18", "It took 19 days.", "yes"),  # off by one
        ("temporal", "How many days?", "18", "It took 20 days.", "no"),
        ("default", "How many days?", "18", "It took 19 days.", "no"),  # only temporal forgives
        ("temporal", "How many days?", "7 days. 8 days (incl.) is also acceptable.", "8", "yes"),
        ("knowledge_update", "How many?", "5", "You had 4, now 5.", "yes"),
        ("abstention", "Hamster name?", "You did not mention it.", "I don't know.", "yes"),
        ("abstention", "Hamster name?", "x", "You never mentioned a hamster, only Luna.", "yes"),
        ("abstention", "Hamster name?", "x", "Your hamster is Luna.", "no"),
    ],
)
def test_offline_twin(branch_name, question, answer, response, reply):
    assert offline_reply(question, answer, response, branch_name) == reply


class _Script(ReplyBackend):
    """Replies by the question in the prompt; remembers the prompts it was sent."""

    def __init__(self, replies):
        self.replies, self.sent = dict(replies), []

    def complete(self, messages, dec):
        prompt = messages[0]["content"]
        self.sent.append((prompt, dec.max_tokens, dec.temperature))
        question = prompt.split("Question: ")[1].split("\n")[0]
        return Completion(self.replies[question], 10, 1, 0.0)


def test_typed_items_get_their_template_and_the_verdict_shape():
    backend = _Script({"How many days?": "Yes", "Hamster?": "no", "What?": "Yes, it does."})
    judge = LongMemEvalJudge(LLM(backend))
    items = [
        LongMemEvalItem.of("q1", "temporal-reasoning", "How many days?", 18, "19 days"),
        LongMemEvalItem.of("q2_abs", "single-session-user", "Hamster?", "Not said.", "Rex"),
        JudgeItem("What?", "a dress", "a dress"),  # untyped: default_type
    ]
    verdicts = judge.judge_many(items)
    assert [v.label for v in verdicts] == [1, 0, 1]
    assert [v.info["template"] for v in verdicts] == ["temporal", "abstention", "default"]
    assert [v.info["reply_exact"] for v in verdicts] == [True, True, False]
    assert verdicts[1].info["abstention"] is True and verdicts[0].info["abstention"] is False
    sent = {p: (mt, t) for p, mt, t in backend.sent}
    assert anscheck_prompt("temporal-reasoning", "How many days?", 18, "19 days") in sent
    assert set(sent.values()) == {(10, 0.0)}
    v = verdicts[0]
    assert (v.judge, v.prompt, v.parsed, v.failure, v.raw) == (
        "longmemeval",
        PROMPT_SOURCE,
        True,
        None,
        "Yes",
    )
    assert "not the paper's" in str(judge.describe()["note"])


def test_offline_judge_from_config_and_bad_options():
    offline = build_llm({"backend": "extractive"})
    judge = build_judge({"name": "longmemeval", "generator": None}, llm=offline)
    assert isinstance(judge, LongMemEvalJudge)
    got = judge.judge_many(
        [
            LongMemEvalItem.of("a", "temporal-reasoning", "How many days?", "18", "19 days"),
            LongMemEvalItem.of("b", "multi-session", "How many days?", "18", "19 days"),
        ]
    )
    assert [(v.label, v.raw, v.backend) for v in got] == [
        (1, "yes", "extractive"),
        (0, "no", "extractive"),
    ]
    assert PAPER_MODEL in str(judge.describe()["note"])
    with pytest.raises(ConfigError, match="default_type 'temporal'"):
        LongMemEvalJudge(offline, default_type="temporal")
    with pytest.raises(DatasetFormatError, match="unknown question type"):
        judge.judge_many([LongMemEvalItem("q", "a", "r", "open-domain")])
