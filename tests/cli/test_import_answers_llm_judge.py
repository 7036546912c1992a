"""An imported run re-judged by an LLM judge (``judge=mem0_j`` with an endpoint): the local
OpenAI-compatible stub plays a judge that says CORRECT when the answer holds every content word
of the gold answer, in the JSON Mem0's prompt asks for. The run's ``j`` is that judge's verdicts
on the published answers; the file's own verdicts stay beside it as ``j_audit``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from recallbench import cli
from recallbench.testing.stub import StubServer

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures" / "locomo_import"
AUDIT = FIXTURES / "answers" / "audit.json"
STOP = {"a", "an", "the", "and", "she", "has", "her", "of", "in"}
MEM0_FIELDS = re.compile(r"^Gold answer: (.*)\nGenerated answer: (.*)$", re.M)  # one line each


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower())) - STOP


def _accepts(gold: str, answer: str) -> bool:
    return bool(_words(gold)) and _words(gold) <= _words(answer)


def mem0_reply(body: dict) -> str:
    found = MEM0_FIELDS.findall(body["messages"][-1]["content"])
    if not found:
        return "no Mem0 judge prompt"
    return json.dumps({"label": "CORRECT" if _accepts(*found[-1]) else "WRONG"})


def _import(monkeypatch, capsys, tmp_path, stub, name):
    judge = f"{{backend: openai, model: stub-judge, base_url: '{stub.base_url}', max_retries: 0}}"
    argv = ["recallbench", "import-answers", str(AUDIT), "--format", "locomo-audit"]
    argv += ["--name", name, f"paths.data_dir={FIXTURES}", f"paths.results_dir={tmp_path}"]
    argv += ["progress=false", "wandb.mode=disabled", f"judge.generator={judge}"]
    monkeypatch.setattr(sys, "argv", argv)
    monkeypatch.setenv("OPENAI_API_KEY", "stub-key")
    capsys.readouterr()
    cli.main()
    folder = Path(capsys.readouterr().out.strip().splitlines()[-1])
    return folder, json.loads((folder / "summary.json").read_text())


def test_llm_judge_rejudges_an_imported_run(monkeypatch, capsys, tmp_path):
    items = [
        item for rows in json.loads(AUDIT.read_text())["detailed_results"].values() for item in rows
    ]
    expected = sum(_accepts(str(i["golden_answer"]), i["generated_answer"]) for i in items)
    assert 0 < expected < len(items)  # the stub's judge accepts some, not all
    with StubServer(reply=mem0_reply) as stub:
        folder, summary = _import(monkeypatch, capsys, tmp_path, stub, "llm")
        assert stub.requests == len(items) == 12
        assert summary["metrics"]["j"]["value"] == pytest.approx(expected / len(items))
        assert summary["judge"]["name"] == "mem0_j" and summary["judge"]["backend"] == "openai"
        assert summary["metrics"]["j_audit"]["value"] == pytest.approx(7 / 12)  # unchanged
        verdicts = [
            json.loads(line)["meta"]["judge"]
            for line in (folder / "predictions.jsonl").read_text().splitlines()
        ]
        assert all(v["parsed"] and v["failure"] is None for v in verdicts)
        monkeypatch.setenv("RECALLBENCH_RERUN", "1")
        _, again = _import(monkeypatch, capsys, tmp_path, stub, "llm")
        assert stub.requests == 12  # the second import's judge calls came from the cache
        assert again["metrics"]["j"]["value"] == summary["metrics"]["j"]["value"]
