"""The panel against the local OpenAI-compatible stub: an LLM judge under every prompt variant.

The stub answers like a judge that accepts an answer when it contains every content word of
the gold answer (``judge_reply``), in the reply format of the prompt it was sent: LUFY C.1 1/0
(2 for "I don't know" and the empty answer, as C.1 asks), CAIM 1/0, THEANINE Fig. 29
"Result: Correct/Incorrect", ours CORRECT/WRONG. On the tiny run (conftest.py) that judge
accepts answers 1, 3 and 4 (answer 3 "Zoe went to Hokkaido." lacks "Sapporo"): 2 of 6.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from recallbench.cli.judge_panel import judge_panel_main
from recallbench.judgepanel import VARIANTS, PanelOptions, pick_variants, prompt_judges, run_panel
from recallbench.llm import build_llm
from recallbench.testing.stub import StubServer

STOP = {"he", "she", "is", "a", "an", "the", "in"}
FIELDS = {  # (gold, answer) in each variant's prompt
    "c1": r"Here is the label answer (.*?)\nHere is the answer that you will be judging: "
    r"(.*?)\nIf the answer to judge is correct",
    "fig29": r"\[Answer\] (.*?) \[Chatbot's Answer\] (.*?)\n\nEvaluate",
    "caim": r"Answer key: (.*?)\nResponse: (.*?)\n\nResponse Correctness",
    "ours": r"Gold answer: (.*?)\nAnswer to grade: (.*?)\n\nGrade",
    "mem0": r"real question:\nQuestion: .*?\nGold answer: (.*?)\nGenerated answer: (.*?)\n\nFirst",
}


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower())) - STOP


def judge_reply(body: dict) -> str:
    """Reply as a judge that wants every content word of the gold answer (module docstring)."""
    prompt = body["messages"][-1]["content"]
    found = [(k, m.groups()) for k, p in FIELDS.items() if (m := re.search(p, prompt, re.S))]
    if not found:
        return "no judge prompt recognized"
    kind, (gold, answer) = found[0]
    accept = bool(_words(gold)) and _words(gold) <= _words(answer)
    if kind == "c1":
        declined = not answer.strip() or answer.lower().startswith("i don't know")
        return "1" if accept else "2" if declined else "0"
    if kind == "fig29":
        return f"[Evaluation] Evaluation: checked. Result: {'Correct' if accept else 'Incorrect'}"
    if kind == "caim":
        return "1" if accept else "0"
    if kind == "mem0":
        return f'{{"label": "{"CORRECT" if accept else "WRONG"}"}}'
    return "CORRECT" if accept else "WRONG"


@pytest.fixture()
def stub():
    with StubServer(reply=judge_reply) as server:
        yield server


def _llm(stub: StubServer, cache: Path):
    cfg = {"backend": "openai", "model": "stub-judge", "base_url": stub.base_url}
    return build_llm({**cfg, "max_retries": 0, "concurrency": 4, "timeout_s": 10}, cache)


def test_every_variant_on_the_stub(stub, tiny_run, tmp_path):
    llm = _llm(stub, tmp_path / "llm.sqlite")
    judges = prompt_judges(llm, pick_variants(None), "stub")
    result = run_panel(tiny_run, judges, PanelOptions(seed=0))
    llm.close()
    assert len(result.judges) == len(VARIANTS) == 6
    n_items = 6 + 5 * 6  # answers + 5 questions x 6 probes
    assert stub.requests == 6 * n_items
    expected = {
        "answers": 2 / 6,
        "gold": 1.0,
        "specific_wrong": 0.0,
        "vague": 0.0,
        "verbose": 1.0,
        "verbose_wrong": 0.0,
        "empty": 0.0,
    }
    for judge in result.judges:
        rates = {k: v["value"] for k, v in result.acceptance[judge["label"]].items()}
        assert rates == pytest.approx(expected), judge["label"]
        assert judge["status"] == "llm" and judge["usage"]["calls"] == n_items
        assert judge["usage"]["parse_failures"] == 0
        # don't-know: C.1 says 2 itself; the others through the lexical rule: the same P
        head = result.headline[judge["label"]]
        assert head["precision"]["value"] == pytest.approx(2 / 4)
        assert head["recall"]["value"] == pytest.approx(2 / 6)
    assert result.agreement["all"]["percent_agreement"] == 1.0
    assert result.agreement["all"]["fleiss_kappa"] == pytest.approx(1.0)


def test_second_panel_is_served_from_the_cache(stub, tiny_run, tmp_path):
    for _ in range(2):
        llm = _llm(stub, tmp_path / "llm.sqlite")
        result = run_panel(tiny_run, prompt_judges(llm, pick_variants(["strict"]), "stub"))
        llm.close()
    assert stub.requests == 36  # the second run made no call
    usage = result.judges[0]["usage"]
    assert usage["calls"] == usage["cached_calls"] == 36


def test_unparseable_replies_get_no_credit_and_are_counted(tiny_run, tmp_path):
    with StubServer(reply=lambda body: "Well, it depends.") as stub:
        llm = _llm(stub, None)
        result = run_panel(tiny_run, prompt_judges(llm, pick_variants(["lufy_c1", "lenient"])))
        llm.close()
    for judge in result.judges:
        assert result.acceptance[judge["label"]]["gold"]["value"] == 0.0
        assert judge["usage"]["parse_failures"] == 36
    failures = {r.verdict.failure for rows in result.judged.values() for r in rows}
    assert all(f and f.startswith("parse failed") for f in failures)


def test_cli_with_an_llm_judge_on_the_stub(stub, tiny_run, tmp_path, capsys):
    generator = f"{{backend: openai, model: m, base_url: '{stub.base_url}'}}"
    spec = f"{{name: llm, label: local, generator: {generator}, variants: [lufy_c1, strict]}}"
    out = tmp_path / "panel"
    judge_panel_main([str(tiny_run), "--judge", "lexical", "--judge", spec, "--out", str(out)])
    rows = {(r["row"], r["column"]): r for r in csv.DictReader((out / "judge_panel.csv").open())}
    assert float(rows["local/strict", "vague"]["ours"]) == 0.0
    assert float(rows["local/lufy_c1 *", "gold"]["ours"]) == 100.0  # * = LUFY's own judge
    assert float(rows["lexical", "Recall"]["ours"]) == pytest.approx(50.0)
    assert float(rows["local/strict", "Recall"]["ours"]) == pytest.approx(100 * 2 / 6)
    assert "local/strict" in capsys.readouterr().out
    assert (tiny_run / "judge_panel").exists() is False  # --out was used
    assert (Path(tiny_run).parent.parent.parent.parent / "cache" / "llm.sqlite").is_file()
