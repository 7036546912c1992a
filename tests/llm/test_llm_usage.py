"""Usage and cost accounting, parse fallbacks, the extractive backend, configs and secrets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from recallbench.errors import ConfigError
from recallbench.llm import LLM, PARSE_FAILURE, ParseError, PriceTable, PromptTask, build_llm
from recallbench.testing.stub import Fault

CONF = Path(__file__).resolve().parents[2] / "conf" / "generator"


def _yes_no(text: str) -> bool:
    word = text.strip().split()[0].strip(".").lower() if text.strip() else ""
    if word not in {"yes", "no"}:
        raise ParseError(f"expected yes/no, got {text[:40]!r}")
    return word == "yes"


JUDGE = PromptTask(
    name="judge.yes_no",
    template="Is {a} the same as {b}? Answer yes or no.",
    parse=_yes_no,
    fallback=False,
    stage="judge",
    offline=lambda a, b: "yes" if a == b else "no",
)
SUMMARY = PromptTask(
    name="summary",
    template=(("system", "Summarize."), ("user", "{text}")),
    offline=lambda text: text.split(".")[0] + ".",
    stage="memory",
)


def test_cost_from_server_usage_and_price_table(stub, make_llm):
    llm = make_llm(model="gpt-4o-mini")
    res = llm.run(SUMMARY, text="one two three. four")
    expected = (res.prompt_tokens * 0.15 + res.completion_tokens * 0.60) / 1e6
    assert res.cost_usd == pytest.approx(expected) and res.cost_usd > 0
    usage = llm.usage.to_dict()
    for bucket in (usage["tasks"]["summary"], usage["by_stage"]["memory"], usage["totals"]):
        assert bucket["calls"] == 1 and bucket["cost_usd"] == pytest.approx(expected)
        assert bucket["prompt_tokens"] == res.prompt_tokens and bucket["latency_s"] > 0
    keys = {
        "calls",
        "cached_calls",
        "prompt_tokens",
        "completion_tokens",
        "cost_usd",
        "latency_s",
        "failures",
        "parse_failures",
    }
    assert keys <= set(usage["totals"]) and set(usage) == {
        "tasks",
        "by_stage",
        "totals",
        "unparsed_samples",
    }
    json.dumps(usage, allow_nan=False)


def test_unknown_model_has_no_cost_and_is_flagged(stub, make_llm):
    llm = make_llm(model="my-vllm-llama")
    res = llm.run(SUMMARY, text="a. b")
    assert res.cost_usd is None
    totals = llm.usage.to_dict()["totals"]
    assert totals["cost_usd"] is None and totals["cost_unknown_calls"] == 1
    assert totals["cost_usd_without_cache"] is None and totals["calls"] == 1
    priced = make_llm(model="my-vllm-llama", price_per_1m=[1.0, 2.0])
    res = priced.run(SUMMARY, text="a. b")
    assert res.cost_usd == pytest.approx((res.prompt_tokens + 2 * res.completion_tokens) / 1e6)


def test_price_table_is_dated_sourced_and_never_silently_zero():
    table = PriceTable()
    assert table.cost("gpt-3.5-turbo-0125", 1_000_000, 1_000_000) == pytest.approx(2.0)
    assert table.cost("gpt-4", 1000, 1000) == pytest.approx(0.09)
    assert table.cost("text-embedding-3-small", 1_000_000, 0) == pytest.approx(0.02)
    assert table.cost("gpt-5-unknown", 10, 10) is None
    assert table.cost("anything-local", 10, 10, local=True) == 0.0
    assert "verify before quoting" in table.source and "2024" in table.source


def test_parse_failure_uses_the_fallback_and_is_counted(stub, make_llm):
    llm = make_llm()
    stub.reply = lambda body: "Maybe, it depends."
    res = llm.run(JUDGE, a="x", b="y")
    assert res.value is False and not res.parsed and res.raw == "Maybe, it depends."
    assert res.failure.startswith(PARSE_FAILURE)
    stub.reply = lambda body: "Yes."
    assert llm.run(JUDGE, a="x", b="y").value is True
    bucket = llm.usage.to_dict()["tasks"]["judge.yes_no"]
    assert (bucket["calls"], bucket["parse_failures"], bucket["failures"]) == (2, 1, 0)


def test_extractive_backend_runs_offline_implementations():
    llm = build_llm({"backend": "extractive"})
    assert (llm.backend.name, llm.model, llm.context_length) == ("extractive", "extractive", 16385)
    out = llm.run_many(JUDGE, [{"a": "x", "b": "x"}, {"a": "x", "b": "y"}])
    assert [r.value for r in out] == [True, False] and all(r.failure is None for r in out)
    summary = llm.run(SUMMARY, text="First sentence. Second one.")
    assert summary.value == "First sentence." and summary.prompt_tokens > summary.completion_tokens
    chat = llm.chat(
        [{"role": "user", "content": "hi"}],
        name="response",
        stage="answer",
        offline=lambda: "  hello back ",
    )
    assert chat.value == "hello back" and chat.cost_usd == 0.0 and not chat.cached
    usage = llm.usage.to_dict()
    assert usage["totals"]["calls"] == 4 and usage["totals"]["cost_usd"] == 0.0
    assert set(usage["by_stage"]) == {"judge", "memory", "answer"}
    assert llm.count_tokens("hello world") == 2


def test_extractive_rerun_is_cached_but_keyed_by_code_and_hidden_fields(tmp_path, monkeypatch):
    import recallbench.llm.calls as calls

    # The template shows only {q}; the offline answer also reads `hint`, which must key the cache.
    task = PromptTask(name="hidden", template="Q: {q}", offline=lambda q, hint: f"{q} {hint}")
    fields = [{"q": "a", "hint": 1}, {"q": "a", "hint": 2}, {"q": "b", "hint": {"k": [1, 2]}}]
    first = build_llm({"backend": "extractive"}, tmp_path / "llm.sqlite")
    assert [r.value for r in first.run_many(task, fields)] == ["a 1", "a 2", "b {'k': [1, 2]}"]
    second = build_llm({"backend": "extractive"}, tmp_path / "llm.sqlite")
    again = second.run_many(task, fields)
    assert [r.value for r in again] == ["a 1", "a 2", "b {'k': [1, 2]}"]
    assert all(r.cached for r in again) and second.usage.to_dict()["totals"]["cached_calls"] == 3
    not_plain = second.run(task, q="a", hint=object())  # not plain data: computed, not cached
    assert not not_plain.cached and not second.run(task, q="a", hint=object()).cached
    monkeypatch.setattr(calls, "source_fingerprint", lambda: "edited-code")
    assert not second.run(task, **fields[0]).cached  # edited offline code: cache miss


def test_extractive_refuses_a_task_without_offline_implementation():
    llm = build_llm({"backend": "extractive"})
    with pytest.raises(ValueError, match="no offline implementation"):
        llm.run(PromptTask(name="llm_only", template="{x}"), x="a")


def test_generator_overrides_and_seed_reach_the_request(stub, make_llm):
    llm = make_llm(temperature=0.3, max_tokens=9, seed=5)
    llm.run(JUDGE, a="x", b="y")
    body = stub.bodies[-1]
    assert (body["temperature"], body["max_tokens"], body["seed"]) == (0.3, 9, 5)


@pytest.mark.parametrize("path", sorted(CONF.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_generator_config_builds(path, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-config-check")
    cfg = yaml.safe_load(path.read_text())
    assert set(cfg) >= {
        "backend",
        "model",
        "base_url",
        "api_key_env",
        "temperature",
        "max_tokens",
        "concurrency",
        "rpm",
        "tpm",
        "timeout_s",
        "max_retries",
        "context_length",
        "seed",
    }
    llm = build_llm(cfg, tmp_path / "llm.sqlite")  # hf models load lazily: nothing loads here
    assert isinstance(llm, LLM) and llm.backend.name == cfg["backend"]
    llm.close()


def test_config_errors_are_clear(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="environment variable OPENAI_API_KEY"):
        build_llm({"backend": "openai", "model": "gpt-4o"})
    with pytest.raises(ConfigError, match="looks like a secret"):
        build_llm({"backend": "openai", "model": "gpt-4o", "api_key": "sk-oops"})
    with pytest.raises(ConfigError, match="Did you mean 'temperature'"):
        build_llm({"backend": "extractive", "temprature": 0.1})
    with pytest.raises(KeyError, match="Did you mean 'openai'"):
        build_llm({"backend": "opneai"})


def test_api_key_never_reaches_dumps(stub, make_llm, monkeypatch, tmp_path):
    secret = "sk-test-TOPSECRET0123456789abcdef"
    monkeypatch.setenv("RB_SECRET_KEY", secret)
    cfg = {
        "backend": "openai",
        "model": "gpt-4o-mini",
        "base_url": stub.base_url,
        "api_key_env": "RB_SECRET_KEY",
        "max_retries": 0,
    }
    llm = build_llm(cfg, tmp_path / "llm.sqlite")
    results = [llm.run(SUMMARY, text="a. b")]
    stub.push_faults(Fault(500))
    results.append(llm.run(SUMMARY, text="c. d"))  # a failure message too
    stub.push_faults(Fault(401))
    with pytest.raises(ConfigError) as refused:
        llm.run(SUMMARY, text="e. f")
    assert stub.auth_headers[0] == f"Bearer {secret}"  # the key was used ...
    dumps = [
        json.dumps(cfg),
        json.dumps(llm.usage.to_dict()),
        json.dumps(llm.describe()),
        repr(llm),
        repr(llm.backend),
        str(refused.value),
        json.dumps([r.usage_dict() | {"failure": r.failure, "raw": r.raw} for r in results]),
    ]
    llm.close()
    dumps.append((tmp_path / "llm.sqlite").read_bytes().decode("latin-1"))
    assert results[1].failure is not None
    for dump in dumps:  # ... and is nowhere in what a run writes
        assert secret not in dump and "TOPSECRET" not in dump


def test_progress_bar_shows_counts_and_cost_only_when_asked(capsys):
    llm = build_llm({"backend": "extractive"})
    fields = [{"a": str(i), "b": "1"} for i in range(3)]
    llm.run_many(JUDGE, fields)  # default: off when stderr is not a terminal (as in tests)
    assert capsys.readouterr().err == ""
    llm.run_many(JUDGE, fields, progress=True)
    err = capsys.readouterr().err
    assert "judge.yes_no" in err and "/3 [" in err and "cost=$0.0000" in err and "failed=0" in err
