"""``verdicts.jsonl``: the one verdict shape per judged text, read back in this shape and the old.

The panel on the tiny run (conftest.py) offline: the lexical judge, LUFY C.1's offline twin (it
labels don't-know), CAIM's offline twin (graded 0 / 0.5 / 1, no don't-know label) and the
strict prompt (no offline twin: unavailable). Answer 3 ("Zoe went to Hokkaido." for "Sapporo,
in Hokkaido.") covers one of the two gold words: the CAIM twin's partial credit 0.5.
"""

from __future__ import annotations

import json

import pytest

from recallbench.errors import DatasetFormatError
from recallbench.judgepanel import (
    AnswerJudge,
    pick_variants,
    prompt_judges,
    read_verdicts,
    run_panel,
    write_report,
)
from recallbench.judgepanel.report import ROW_KEYS
from recallbench.judges import LexicalJudge
from recallbench.llm import build_llm
from recallbench.verdict import CORRECT, DONT_KNOW, INCORRECT, UNAVAILABLE

C1, CAIM, STRICT = (f"extractive:extractive/{v}" for v in ("lufy_c1", "caim_correctness", "strict"))


@pytest.fixture()
def panel(tiny_run):
    llm = build_llm({"backend": "extractive"})
    variants = pick_variants(["lufy_c1", "caim_correctness", "strict"])
    judges = [AnswerJudge(LexicalJudge()), *prompt_judges(llm, variants, protocol="qa")]
    yield run_panel(tiny_run, judges)
    llm.close()


def _answers(result, label):
    return {r.item: r.verdict for r in result.judged[label] if r.set == "answers"}


def test_the_verdicts_say_credit_dont_know_and_unavailability(panel):
    caim, c1 = _answers(panel, CAIM), _answers(panel, C1)
    partial = caim["e1/q2/after_s2"]
    assert (partial.score, partial.label, partial.judge) == (0.5, INCORRECT, CAIM)
    assert (partial.backend, partial.model) == ("extractive", "extractive")
    assert c1["e1/q1/after_s2"].label == DONT_KNOW  # "I don't know.": C.1 says 2 itself
    assert caim["e1/q1/after_s2"].label == INCORRECT  # CAIM has no don't-know label
    assert _answers(panel, "lexical")["e1/q1/after_s1"].judge == "lexical"
    strict = [r.verdict for r in panel.judged[STRICT]]
    assert strict and all(not v.available and v.failed(UNAVAILABLE) for v in strict)
    assert "no offline twin of prompt strict" in (strict[0].failure or "")
    said = {j["label"]: j["has_dont_know"] for j in panel.judges}
    assert said == {"lexical": True, C1: True, CAIM: False, STRICT: False}
    # CAIM's uncredited "I don't know." and "" count as unanswered through the lexical rule:
    # credit 2.5 of 6, answered 4 -> precision 2.5 / 4, as C.1's own 2 labels give for its 3
    assert panel.headline[CAIM]["precision"]["value"] == pytest.approx(2.5 / 4)
    assert panel.headline[C1]["precision"]["value"] == pytest.approx(3 / 4)


def test_verdicts_jsonl_is_the_one_shape_and_reads_back_whole(panel, tmp_path):
    path = write_report(panel, tmp_path / "out")["verdicts"]
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == sum(len(v) for v in panel.judged.values())
    for row in rows:
        assert set(ROW_KEYS) | {"label", "correct", "score", "raw", "failure", "usage"} <= set(row)
        assert "credit" not in row and "dont_know" not in row  # the old shape's keys are gone
    unavailable = [r for r in rows if r["judge"] == STRICT]
    assert unavailable and all(r["score"] is None for r in unavailable)
    assert read_verdicts(path) == panel.judged


def _old_rows(result):
    """The rows judgepanel/report.py wrote before issue 47 (PanelVerdict), from ``result``."""
    said = {j["label"]: j["has_dont_know"] for j in result.judges}
    return [
        {
            "judge": label,
            "set": r.set,
            "item": r.item,
            "episode_id": r.episode_id,
            "question": r.input.question,
            "reference": r.input.reference,
            "answer": r.input.answer,
            "credit": r.verdict.score,
            "dont_know": r.verdict.dont_know if said[label] else None,
            "raw": r.verdict.raw,
            "failure": "unavailable offline" if not r.verdict.available else r.verdict.failure,
        }
        for label, rows in result.judged.items()
        for r in rows
    ]


def test_a_verdicts_file_of_the_old_shape_reads_as_the_same_verdicts(panel, tmp_path):
    path = tmp_path / "verdicts.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in _old_rows(panel)))
    old = read_verdicts(path)
    assert list(old) == list(panel.judged)
    for label, rows in panel.judged.items():
        assert [(r.set, r.item, r.input) for r in old[label]] == [
            (r.set, r.item, r.input) for r in rows
        ]
        got = [(r.verdict.label, r.verdict.score, r.verdict.judge) for r in old[label]]
        assert got == [(r.verdict.label, r.verdict.score, label) for r in rows], label
    unavailable = old[STRICT][0].verdict
    assert not unavailable.available and unavailable.failure == "unavailable offline"
    assert {r.verdict.label for r in old[CAIM]} == {CORRECT, INCORRECT}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "line 2: Expecting value"),
        ("[1, 2]", "line 2: expected a JSON object, got list"),
        ('{"judge": "j", "item": "i"}', "line 2: ['set', 'episode_id', 'question'"),
        ("VALID", "line 2: verdict label must be one of"),
    ],
)
def test_a_bad_row_is_one_error_naming_file_and_line(panel, tmp_path, line, message):
    row = {k: "x" for k in ROW_KEYS} | {"label": 1}
    if line == "VALID":
        line = json.dumps(row | {"label": 7})
    path = tmp_path / "verdicts.jsonl"
    path.write_text(json.dumps(row) + "\n" + line + "\n")
    with pytest.raises(DatasetFormatError, match="verdicts.jsonl line 2") as err:
        read_verdicts(path)
    assert message in str(err.value)
