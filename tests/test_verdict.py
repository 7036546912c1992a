"""The one verdict shape (``recallbench.verdict``): written whole, read from every older shape."""

from __future__ import annotations

import json

import pytest

from recallbench.judges import LexicalJudge, Verdict
from recallbench.records import Prediction
from recallbench.verdict import (
    CORRECT,
    DONT_KNOW,
    INCORRECT,
    UNAVAILABLE,
    graded_label,
    require_verdict,
    verdict_of,
)

# Shape 1: judges.base.Verdict.to_dict() before issue 47 (qa, qa_gvd, locomo_qa, locomo_import).
OLD_QA = {
    "label": 2,
    "raw": "2",
    "parsed": True,
    "failure": None,
    "usage": {},
    "info": {"key": ["biscuit"], "matched": [], "coverage": 0.0, "numbers_missing": []},
}
# Shape 2: TeaFarm's dict (protocols/teafarm/_teafarm.py before issue 47).
OLD_TEAFARM = {
    "correct": True,
    "raw": "Correct",
    "parsed": True,
    "failure": None,
    "usage": {"calls": 1},
    "backend": "extractive",
    "model": "extractive",
    "prompt": "TeaFarm (Ong et al.) Fig. 29, verbatim",
}
# Shape 3: the judge panel's per-item verdict (judgepanel verdicts.jsonl).
OLD_PANEL = {"credit": 0.0, "dont_know": True, "raw": "2", "failure": None}
# This shape as Verdict.to_dict() wrote it before unavailable verdicts existed (score a number).
OLD_ONE_SHAPE = {
    "label": 0,
    "correct": False,
    "score": 0.5,
    "raw": "0.5",
    "parsed": True,
    "failure": None,
    "usage": {"prompt_tokens": 12},
    "info": {},
    "judge": "llm",
}


def _pred(judge: object) -> Prediction:
    return Prediction("q1/after_s1", "e1", 1, "answer", "h", "out", meta={"judge": judge})


def test_old_qa_shape_reads_with_its_label():
    v = Verdict.from_dict(OLD_QA)
    assert (v.label, v.correct, v.dont_know, v.score) == (DONT_KNOW, False, True, 0.0)
    assert v.info["key"] == ["biscuit"] and v.judge is None and v.key is None


def test_old_teafarm_shape_reads_correct_as_label_1():
    v = Verdict.from_dict(OLD_TEAFARM)
    assert (v.label, v.correct, v.score) == (CORRECT, True, 1.0)
    assert (v.backend, v.prompt, v.usage) == ("extractive", OLD_TEAFARM["prompt"], {"calls": 1})
    wrong = Verdict.from_dict({**OLD_TEAFARM, "correct": False})
    assert (wrong.label, wrong.correct, wrong.score) == (INCORRECT, False, 0.0)


def test_old_panel_shape_reads_credit_and_dont_know():
    v = Verdict.from_dict(OLD_PANEL)
    assert (v.label, v.score) == (DONT_KNOW, 0.0)
    assert Verdict.from_dict({"credit": 1.0, "raw": "1"}).label == CORRECT
    half = Verdict.from_dict({"credit": 0.5})
    assert (half.label, half.score, half.correct) == (INCORRECT, 0.5, False)


def test_old_panel_shape_reads_an_unavailable_judge_and_no_dont_know_label():
    # credit null: the judge was unavailable (before issue 47 this shape then failed to read)
    v = Verdict.from_dict(
        {"credit": None, "dont_know": None, "raw": "", "failure": "unavailable offline"}
    )
    assert (v.available, v.score, v.failure) == (False, None, "unavailable offline")
    bare = Verdict.from_dict({"credit": None})
    assert not bare.available and bare.failure == f"{UNAVAILABLE}: no credit"
    # dont_know null (a judge without that label) reads as not don't-know: the label is credit's
    assert Verdict.from_dict({"credit": 1.0, "dont_know": None}).label == CORRECT
    assert Verdict.from_dict({"credit": 0.0, "dont_know": None}).label == INCORRECT


def test_a_verdict_file_written_before_unavailable_verdicts_still_reads():
    v = Verdict.from_dict(OLD_ONE_SHAPE)
    assert (v.label, v.score, v.available, v.credit) == (INCORRECT, 0.5, True, 0.5)
    assert v.to_dict() == OLD_ONE_SHAPE  # and is written back unchanged


def test_an_unavailable_verdict_has_no_score_and_round_trips():
    v = Verdict(label=INCORRECT, failure=f"{UNAVAILABLE}: no offline twin", judge="x/strict")
    assert (v.available, v.score, v.correct, v.dont_know) == (False, None, False, False)
    assert v.failed(UNAVAILABLE)
    with pytest.raises(ValueError, match="unavailable verdict has no credit"):
        _ = v.credit
    d = json.loads(json.dumps(v.to_dict(), allow_nan=False))
    assert d["score"] is None and d["failure"].startswith("unavailable: ")
    assert Verdict.from_dict(d) == v
    with pytest.raises(ValueError, match="unavailable verdict has no score"):
        Verdict(label=INCORRECT, failure=f"{UNAVAILABLE}: x", score=0.0)
    # any other failure keeps the label's credit (an LLM call's fallback is a verdict)
    assert Verdict(label=INCORRECT, failure="call failed: timeout").score == 0.0


@pytest.mark.parametrize(
    ("score", "dont_know", "label"),
    [
        (1.0, False, CORRECT),
        (0.5, False, INCORRECT),
        (0.0, False, INCORRECT),
        (0.0, True, DONT_KNOW),
    ],
)
def test_a_graded_credit_keeps_its_score_and_derives_its_label(score, dont_know, label):
    assert graded_label(score, dont_know) == label
    v = Verdict(label=graded_label(score, dont_know), score=score)
    assert (v.credit, v.available) == (score, True)
    assert Verdict.from_dict(json.loads(json.dumps(v.to_dict()))) == v


def test_new_shape_carries_every_old_reader_key_and_round_trips():
    v = Verdict(label=CORRECT, raw="1", judge="llm", backend="openai", model="m", prompt="C.1")
    d = json.loads(json.dumps(v.to_dict()))
    assert d["label"] == 1 and d["correct"] is True and d["score"] == 1.0  # qa's and teafarm's
    assert {"raw", "parsed", "failure", "usage", "info", "backend", "model", "prompt"} <= set(d)
    assert Verdict.from_dict(d) == v
    assert "key" not in d  # optional fields are written only when set


def test_the_release_key_survives_a_round_trip():
    v = Verdict(label=INCORRECT, key="release")
    assert Verdict.from_dict(v.to_dict()).key == "release"


def test_lexical_judge_writes_the_one_shape():
    v = LexicalJudge().judge("What is Zoe's dog called?", "Biscuit", "Her dog is Biscuit.")
    assert (v.label, v.judge, v.score) == (CORRECT, "lexical", 1.0)
    assert Verdict.from_dict(v.to_dict()) == v


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        ({"raw": "1"}, "needs 'label'"),
        ({"label": 3}, "label must be one of"),
        ({"label": 1, "score": float("nan")}, "finite"),
        ("1", "JSON object"),
    ],
)
def test_unknown_shapes_fail_naming_the_prediction(bad, match):
    with pytest.raises(ValueError, match=match) as err:
        verdict_of(_pred(bad))
    assert "q1/after_s1" in str(err.value)


def test_unjudged_predictions_have_no_verdict():
    p = Prediction("q1/after_s1", "e1", 1, "answer", "h", "out")
    assert verdict_of(p) is None
    with pytest.raises(ValueError, match="q1/after_s1 has no judge verdict"):
        require_verdict(p)
