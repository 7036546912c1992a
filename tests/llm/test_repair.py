"""The repair turn (issue 23.2): an unparsed reply is asked again with the parser's error, counted
apart from parse failures, cached like any call, and never made offline."""

from __future__ import annotations

from recallbench.llm import PARSE_FAILURE, PromptTask, build_llm
from recallbench.llm.flow import REPAIR_PROMPT
from recallbench.llm.shapes import Choice
from recallbench.run.record import HealthPolicy, health_problems
from recallbench.run.report import usage_line

JUDGE = PromptTask(
    name="judge.qa",
    template="Is {x} right? Only output 1 or 0.",
    parse=int,
    fallback=0,
    max_tokens=4,
    reply=Choice(("1", "0")),
)


def _scripted(*replies: str):
    """A stub reply function answering the i-th request of each chat length with replies[i]."""

    def reply(body: dict) -> str:
        turns = (len(body["messages"]) - 1) // 2  # 0 for the first ask, 1 after one repair ...
        return replies[min(turns, len(replies) - 1)]

    return reply


def test_an_unparsed_reply_is_asked_again_with_the_error(stub, make_llm):
    llm = make_llm(repairs=1)
    stub.reply = _scripted("Sure! The answer is yes.", "1")
    res = llm.run(JUDGE, x="Paris")
    assert res.value == 1 and res.failure is None and res.repairs == 1 and stub.requests == 2
    first, second = stub.bodies[-2], stub.bodies[-1]
    assert second["messages"][:1] == first["messages"]
    assert second["messages"][1] == {"role": "assistant", "content": "Sure! The answer is yes."}
    error = "invalid literal for int() with base 10: 'Sure! The answer is yes.'"
    assert second["messages"][2] == {
        "role": "user",
        "content": REPAIR_PROMPT.format(error=f"{error} (expected exactly one of: 1, 0)"),
    }
    # tokens and latency of both turns; one task call, one repair turn, no parse failure
    assert res.prompt_tokens == sum(
        sum(len(m["content"].split()) + 4 for m in b["messages"]) for b in (first, second)
    )
    bucket = llm.usage.to_dict()["tasks"]["judge.qa"]
    assert (bucket["calls"], bucket["repairs"], bucket["repaired"]) == (2, 1, 1)
    assert bucket["parse_failures"] == 0 and llm.usage.unparsed == {}
    assert res.usage_dict()["repairs"] == 1


def test_a_reply_still_unparsed_after_the_last_turn_is_one_parse_failure(stub, make_llm):
    llm = make_llm(repairs=2)
    stub.reply = _scripted("yes", "definitely yes", "YES!")
    res = llm.run(JUDGE, x="Paris")
    assert res.value == 0 and res.failure.startswith(PARSE_FAILURE) and res.raw == "YES!"
    assert res.repairs == 2 and stub.requests == 3
    usage = llm.usage.to_dict()
    bucket = usage["tasks"]["judge.qa"]
    assert (bucket["calls"], bucket["repairs"], bucket["repaired"]) == (3, 2, 0)
    assert bucket["parse_failures"] == 1 and usage["unparsed_samples"]["judge.qa"] == ["YES!"]
    # health rates are per task call (repair turns are not calls of their own)
    problems = health_problems(usage, HealthPolicy())
    assert problems == [
        {"task": "judge.qa", "kind": "parse_failures", "n": 1, "calls": 1, "rate": 1.0}
    ]
    assert "repair turns 2 (0 parsed)" in usage_line(usage)


def test_no_repair_by_default_and_a_parsed_reply_is_never_repaired(stub, make_llm):
    llm = make_llm()
    stub.reply = lambda body: "no idea"
    assert llm.run(JUDGE, x="a").failure.startswith(PARSE_FAILURE) and stub.requests == 1
    assert llm.describe()["repairs"] == 0
    fixing = make_llm(repairs=3)
    stub.reply = lambda body: "0"
    results = fixing.run_many(JUDGE, [{"x": str(i)} for i in range(5)])
    assert [r.value for r in results] == [0] * 5 and stub.requests == 1 + 5
    assert fixing.usage.to_dict()["totals"]["repairs"] == 0


def test_repair_turns_are_cached_so_a_rerun_sends_nothing(stub, make_llm):
    stub.reply = _scripted("hmm", "1")
    first = make_llm(cache=True, repairs=1).run_many(JUDGE, [{"x": "a"}, {"x": "b"}])
    assert [r.value for r in first] == [1, 1] and stub.requests == 4
    again = make_llm(cache=True, repairs=1)
    second = again.run_many(JUDGE, [{"x": "a"}, {"x": "b"}])
    assert [r.value for r in second] == [1, 1] and all(r.cached for r in second)
    assert stub.requests == 4  # nothing sent
    totals = again.usage.to_dict()["totals"]
    assert (totals["calls"], totals["cached_calls"], totals["repairs"]) == (4, 4, 2)


def test_the_extractive_backend_never_repairs():
    task = PromptTask(name="t", template="{x}", parse=int, offline=lambda x: "not a number")
    llm = build_llm({"backend": "extractive", "repairs": 2}, None)
    res = llm.run(task, x="a")
    assert res.failure.startswith(PARSE_FAILURE) and res.repairs == 0
    assert llm.usage.to_dict()["totals"]["repairs"] == 0
