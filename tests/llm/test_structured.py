"""Structured outputs: what each mode sends (checked against the stub's recorded request bodies),
both reply forms parsing to one value, the cache key, and the modes each backend refuses."""

from __future__ import annotations

import json
import re

import pytest

from recallbench.errors import ConfigError
from recallbench.llm import PromptTask, build_llm
from recallbench.llm.cache import cache_key
from recallbench.llm.gbnf import choice_to_gbnf, regex_to_gbnf
from recallbench.llm.shapes import Choice, JsonReply, Pattern
from recallbench.memory.memochat import MEMOS_REPLY
from recallbench.memory.timerag._extractor import EXTRACT_TASK

CHOICE = PromptTask(
    name="judge.qa",
    template="Q {x}",
    parse=int,
    fallback=-1,
    max_tokens=4,
    reply=Choice(("1", "0", "2")),
)
PATTERN = PromptTask(
    name="lufy.importance",
    template="Rate {x}",
    max_tokens=32,
    parse=lambda r: int(r.split("Score: ")[1].split()[0]),
    reply=Pattern(r"Score: ([1-9]|10)\nReason: [^\n]{1,20}"),
)
MEMOS = PromptTask(name="memochat.write_memos", template="W {x}", reply=MEMOS_REPLY)
WRAPPER_CHOICE = {
    "type": "object",
    "properties": {"answer": {"type": "string", "enum": ["1", "0", "2"]}},
    "required": ["answer"],
    "additionalProperties": False,
}
CONSTRAINT_KEYS = ("response_format", "structured_outputs", "grammar")


def test_json_schema_mode_sends_openai_response_format(stub, make_llm):
    llm = make_llm(structured="json_schema")
    stub.reply = lambda body: '{"answer": "2"}'
    assert llm.run(CHOICE, x="a").value == 2  # the wrapper is unwrapped before parsing
    assert stub.bodies[-1]["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "judge_qa", "schema": WRAPPER_CHOICE, "strict": True},
    }
    stub.reply = lambda body: '{"answer": "Score: 7\\nReason: big news"}'
    assert llm.run(PATTERN, x="b").value == 7
    schema = stub.bodies[-1]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["answer"] == {
        "type": "string",
        "pattern": "^(?:Score: ([1-9]|10)\\nReason: [^\\n]{1,20})$",
    }
    llm.run(MEMOS, x="c")
    sent = stub.bodies[-1]["response_format"]["json_schema"]["schema"]
    memo = sent["properties"]["memos"]["items"]
    assert memo["required"] == ["topic", "summary", "start", "end"]
    assert "maxLength" not in memo["properties"]["topic"]  # outside OpenAI's strict subset
    assert sent["properties"]["memos"]["maxItems"] == 12


def test_vllm_mode_sends_structured_outputs(stub, make_llm):
    llm = make_llm(structured="vllm")
    stub.reply = lambda body: "0"
    assert llm.run(CHOICE, x="a").value == 0
    body = stub.bodies[-1]
    assert body["structured_outputs"] == {"choice": ["1", "0", "2"]}
    assert "response_format" not in body and "grammar" not in body
    llm.run(PATTERN, x="b")
    assert stub.bodies[-1]["structured_outputs"] == {
        "regex": r"Score: ([1-9]|10)\nReason: [^\n]{1,20}"
    }
    llm.run(MEMOS, x="c")
    assert stub.bodies[-1]["structured_outputs"] == {"json": MEMOS_REPLY.json_schema()}
    assert stub.bodies[-1]["structured_outputs"]["json"]["properties"]["memos"]["items"][
        "properties"
    ]["topic"] == {"type": "string", "maxLength": 80}


def test_llamacpp_mode_sends_a_grammar_or_a_json_object_schema(stub, make_llm):
    llm = make_llm(structured="llamacpp")
    stub.reply = lambda body: "1"
    llm.run(CHOICE, x="a")
    assert stub.bodies[-1]["grammar"] == 'root ::= "1" | "0" | "2"\n'
    llm.run(PATTERN, x="b")
    assert stub.bodies[-1]["grammar"] == (
        'root ::= "Score: " ([1-9] | "10") "\\x0AReason: " [^\\x0A]{1,20}\n'
    )
    llm.run(MEMOS, x="c")
    assert stub.bodies[-1]["response_format"] == {
        "type": "json_object",
        "schema": MEMOS_REPLY.json_schema(),
    }


def test_off_sends_nothing_and_keeps_the_free_text_cache_key(stub, make_llm):
    llm = make_llm(cache=True)
    stub.reply = lambda body: "  1 "
    assert llm.run(CHOICE, x="a").value == 1
    assert not set(CONSTRAINT_KEYS) & set(stub.bodies[-1])
    messages = [{"role": "user", "content": "Q a"}]
    params = {"max_tokens": 4, "temperature": 0.0, "seed": None}
    # the key of a free-text call holds no constraint: what it was before structured outputs
    # existed, plus the endpoint (issue 23.3)
    key = llm._key(llm._task_call(CHOICE, {"x": "a"}))
    assert key == cache_key(
        "openai", "gpt-4o-mini", messages, {**params, "endpoint": stub.base_url}
    )


def test_mode_and_constraint_are_part_of_the_cache_key(stub, make_llm):
    keys = set()
    for mode in ("off", "json_schema", "vllm", "llamacpp"):
        llm = make_llm(cache=True, structured=mode)
        keys.add(llm._key(llm._task_call(CHOICE, {"x": "a"})) or "")
        keys.add(llm._key(llm._task_call(PATTERN, {"x": "a"})) or "")
    narrower = PromptTask(**{**CHOICE.__dict__, "reply": Choice(("1", "0"))})
    llm = make_llm(cache=True, structured="vllm")
    keys.add(llm._key(llm._task_call(narrower, {"x": "a"})) or "")
    assert len(keys) == 9 and "" not in keys
    cached = make_llm(cache=True, structured="vllm")
    stub.reply = lambda body: "2"
    first = cached.run(CHOICE, x="z")
    again = cached.run(CHOICE, x="z")
    assert not first.cached and again.cached and again.value == 2 and stub.requests == 1


@pytest.mark.parametrize(
    ("owner", "field"),
    [
        ("vllm", "structured_outputs"),
        ("llamacpp", "grammar"),
        ("me", "grammar"),
        ("openai", "response_format"),
        ("library", "response_format"),
    ],
)
def test_auto_asks_the_endpoint_who_serves_it(stub, make_llm, owner, field):
    stub.owned_by = owner
    try:
        llm = make_llm(structured="auto")
        stub.reply = lambda body: '{"answer": "1"}' if field == "response_format" else "1"
        assert llm.run(CHOICE, x="a").value == 1
        assert field in stub.bodies[-1]
        assert llm.describe()["structured"] != "auto"  # run.json records the resolved mode
    finally:
        stub.owned_by = "stub"


def test_auto_without_a_shaped_call_records_free_text(stub, make_llm):
    # a run whose tasks have no reply shape never constrains a reply: run.json says "off"
    # (what happened) and that auto was asked; the endpoint is never asked who serves it
    llm = make_llm(structured="auto")
    llm.run(PromptTask(name="response", template="Say {x}"), x="hi")
    assert "response_format" not in stub.bodies[-1] and "grammar" not in stub.bodies[-1]
    assert (llm.describe()["structured"], llm.describe()["structured_asked"]) == ("off", "auto")
    assert stub.requests == 1  # the chat call only, no GET /models


def test_auto_with_a_silent_endpoint_says_what_to_set(make_llm):
    llm = build_llm(
        {
            "backend": "openai",
            "model": "m",
            "base_url": "http://127.0.0.1:9/v1",
            "structured": "auto",
            "max_retries": 0,
            "timeout_s": 2,
        },
        None,
    )
    with pytest.raises(ConfigError, match="set generator.structured to json_schema"):
        llm.run(CHOICE, x="a")
    llm.close()


def test_modes_a_backend_cannot_use_are_refused():
    with pytest.raises(ConfigError, match="extractive backend has no model"):
        build_llm({"backend": "extractive", "structured": "json_schema"}, None)
    with pytest.raises(ConfigError, match="options there: off, local, auto"):
        build_llm({"backend": "hf", "structured": "vllm"}, None)
    with pytest.raises(ConfigError, match="options are off, json_schema, vllm, llamacpp"):
        build_llm({"backend": "openai", "model": "m", "base_url": "x", "structured": "on"}, None)
    assert build_llm({"backend": "extractive", "structured": False}, None).structured == "off"


def test_tasks_without_a_shape_are_sent_as_free_text_in_every_mode(stub, make_llm):
    free = PromptTask(name="qa.answer", template="A {x}", max_tokens=8)
    llm = make_llm(structured="vllm")
    llm.run(free, x="a")
    assert not set(CONSTRAINT_KEYS) & set(stub.bodies[-1])


# -- both forms parse to one value ------------------------------------------------------------


def test_choice_and_pattern_parse_raw_wrapped_and_free_text_alike():
    assert CHOICE.parse_reply("2") == CHOICE.parse_reply('{"answer": "2"}') == 2
    assert CHOICE.parse_reply('```json\n{"answer": "0"}\n```') == 0
    free = "Score: 9\nReason: a wedding"
    assert PATTERN.parse_reply(free) == PATTERN.parse_reply(json.dumps({"answer": free})) == 9
    with pytest.raises(ValueError, match="expected exactly one of: 1, 0, 2"):
        CHOICE.parse_reply('{"answer": "maybe"}')


def test_json_shapes_render_to_the_form_the_parser_reads():
    memos = [{"topic": "dogs", "summary": "A has a dog.", "start": 1, "end": 3}]
    structured = json.dumps({"memos": memos})
    free = json.dumps(memos)
    assert MEMOS.parse_reply(structured) == MEMOS.parse_reply(free) == free
    facts = [{"slot_type": "preference.food", "value": "sushi", "polarity": "+", "confidence": 0.9}]
    got = EXTRACT_TASK.parse_reply(json.dumps({"facts": facts}))
    assert got == EXTRACT_TASK.parse_reply(json.dumps(facts))
    assert [(c.slot_type, c.value, c.polarity, c.reliability) for c in got] == [
        ("preference.food", "sushi", "+", 0.9)
    ]


def test_a_json_shape_must_be_strict():
    from pydantic import BaseModel

    class Loose(BaseModel):
        a: int = 1

    with pytest.raises(ValueError, match="additionalProperties must be false"):
        JsonReply(Loose)


# -- GBNF ---------------------------------------------------------------------------------------


def test_regex_to_gbnf_by_hand():
    assert regex_to_gbnf(r"- Relation: (Cause|None)") == (
        'root ::= "- Relation: " ("Cause" | "None")\n'
    )
    assert regex_to_gbnf(r"\d{4}(,\d+)*|NONE?") == (
        'root ::= ([0-9]{4} ("," [0-9]+)* | "NON" "E"?)\n'
    )
    assert (
        regex_to_gbnf(r'[^"\]-]x.\s') == 'root ::= [^\\x22\\x5D\\x2D] "x" [^\\x0A] [\\x09-\\x0D ]\n'
    )
    assert choice_to_gbnf(["a b", 'q"']) == 'root ::= "a b" | "q\\x22"\n'
    # llama.cpp refused COMEDY's bounded lines inside a bounded group ("exceeds sane
    # defaults": 196 rules x 11) and its server died: a repeated group becomes a rule of its
    # own, so every bound is kept and the repeat multiplies one rule
    from recallbench.memory.comedy._comedy import SESSION_REPLY

    assert regex_to_gbnf(SESSION_REPLY.pattern) == (
        'rep1 ::= "\\x0A" [A-Z] [^\\x0A]{5,200}\n'
        'root ::= ("No memory" | [A-Z] [^\\x0A]{5,200} rep1{0,11})\n'
    )
    assert regex_to_gbnf(r"((ab){2,3}(c|d)){0,3}(ab){2,3}") == (
        'rep1 ::= "ab"{2,3} [cd]\nroot ::= rep1{0,3} "ab"{2,3}\n'
    )
    assert regex_to_gbnf(r"(x{1,2}){0,3}(y{1,2}){4}") == (
        'rep1 ::= "x"{1,2}\nrep2 ::= "y"{1,2}\nroot ::= rep1{0,3} rep2{4}\n'
    )
    assert regex_to_gbnf(r"E: [^\n]{1,300} C: (1|2)") == (
        'root ::= "E: " [^\\x0A]{1,300} " C: " [12]\n'
    )
    # llama.cpp refuses a bound of 2000: an upper one is opened, a lower one is an error
    assert regex_to_gbnf(r"a{1,1999}b{3,2000}") == 'root ::= "a"{1,1999} "b"{3,}\n'
    with pytest.raises(ValueError, match="lower bound of 2000"):
        regex_to_gbnf(r"a{2000,}")
    for bad in (r"(?=x)a", r"(a)\1", r"(?i)a"):
        with pytest.raises(ValueError, match="no GBNF equivalent"):
            regex_to_gbnf(bad)


def test_every_declared_shape_can_be_sent_in_every_mode(declared_tasks):
    from recallbench.llm.structured import Structured, request_extras

    assert len(declared_tasks) >= 30
    for task in declared_tasks:
        for mode in ("json_schema", "vllm", "llamacpp"):
            extras = request_extras(Structured(mode, task.reply, task.name))
            assert extras and json.dumps(extras), (task.name, mode)
        if isinstance(task.reply, Pattern):  # what llama.cpp refused: a bounded group repeat
            grammar = regex_to_gbnf(task.reply.pattern)
            assert not re.search(r"\)\{\d", grammar), (task.name, grammar)
            assert not re.search(r"\d{4}", grammar), (task.name, grammar)
        if isinstance(task.reply, Choice):  # every label, bare or wrapped, parses alike
            for label in task.reply.labels:
                assert task.parse_reply(label) == task.parse_reply(json.dumps({"answer": label}))


@pytest.mark.parametrize(("mode", "room"), [("llamacpp", 14), ("vllm", 14), ("json_schema", 27)])
def test_a_constrained_choice_gets_tokens_for_its_longest_label(stub, make_llm, mode, room):
    """Seen on the real llama.cpp server (make test-server): judge.nli's 4 tokens cut the
    grammar-constrained reply to "contradict", which is no label. Constrained, a Choice gets at
    least one token per character of its longest label (its JSON object under json_schema);
    free text keeps the task's own bound (the papers' setting)."""
    from recallbench.judges.nli import NLI_TASK

    assert NLI_TASK.max_tokens == 4
    stub.reply = lambda body: "contradiction"
    make_llm(structured=mode).run(NLI_TASK, premise="p", hypothesis="h")
    assert stub.bodies[-1]["max_tokens"] == room  # len('{"answer": "contradiction"}') == 27
    make_llm().run(NLI_TASK, premise="p", hypothesis="h")
    assert stub.bodies[-1]["max_tokens"] == 4
