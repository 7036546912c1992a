"""CAIM's verdicts (``judges._caim_verdicts``): one ``Verdict`` per metric in ``meta["caim"]``,
read by ``caim_verdicts`` in the new shape and in the older ``{scores, raw, failures, info}``."""

from __future__ import annotations

import json

import pytest

from recallbench.judges.caim import (
    CAIM_METRICS,
    CaimItem,
    CaimVerdicts,
    LexicalCaimJudge,
    LLMCaimJudge,
    caim_verdicts,
    metric_verdict,
)
from recallbench.llm import LLM, Completion
from recallbench.protocols.qa_gvd.scores import score_caim
from recallbench.records import Prediction, read_jsonl
from recallbench.testing.backend import ReplyBackend
from recallbench.verdict import CORRECT, INCORRECT, UNAVAILABLE

# What a qa_gvd run wrote before issue 47 (CaimVerdict.to_dict of an LLM judge), byte for byte.
OLD = {
    "scores": {
        "retrieval_accuracy": 1,
        "response_correctness": 0.5,
        "contextual_coherence": None,
        "memory_storage": 0.0,
    },
    "raw": {"retrieval_accuracy": "1", "response_correctness": "0.5", "memory_storage": "maybe"},
    "failures": {"memory_storage": "parse failed: reply must be exactly one of ..."},
    "info": {"declined": False},
}
KEYED = CaimItem(
    question="What bread did I bake?",
    response="Rye, I think.",
    answers=("Rye with caraway seeds",),
    keywords=("rye", "caraway"),
    answerable=True,
)
UNANSWERABLE = CaimItem("What is my cat called?", "I don't know.", answerable=False)
UNKEYED = CaimItem("What?", "Rye.")


def answer(i: int, caim: dict) -> Prediction:
    return Prediction(f"e/q{i}", "e", 1, "answer", "q", "a", meta={"qa_id": f"q{i}", "caim": caim})


def test_old_shape_reads_as_one_verdict_per_metric(tmp_path) -> None:
    path = tmp_path / "predictions.jsonl"
    path.write_text(json.dumps(answer(0, OLD).to_dict()) + "\n")
    (p,) = read_jsonl(path, Prediction)
    got = caim_verdicts(p)
    assert got is not None and got.info == {"declined": False}
    assert got.scores == {m: OLD["scores"][m] for m in CAIM_METRICS}
    assert got.failures == {"memory_storage": OLD["failures"]["memory_storage"]}
    retrieval, correctness = (
        got.verdicts["retrieval_accuracy"],
        got.verdicts["response_correctness"],
    )
    assert (retrieval.label, retrieval.score, retrieval.raw) == (CORRECT, 1.0, "1")
    assert (correctness.label, correctness.score, correctness.parsed) == (INCORRECT, 0.5, True)
    storage = got.verdicts["memory_storage"]
    assert (storage.score, storage.raw, storage.parsed) == (0.0, "maybe", False)
    coherence = got.verdicts["contextual_coherence"]
    assert not coherence.available and coherence.failed(UNAVAILABLE)
    assert all(v.info == {"metric": m} and v.judge is None for m, v in got.verdicts.items())


def test_lexical_verdicts_write_the_one_shape_and_read_back(tmp_path) -> None:
    judged = LexicalCaimJudge().judge_many([KEYED, UNANSWERABLE, UNKEYED])
    path = tmp_path / "predictions.jsonl"
    path.write_text(
        "".join(json.dumps(answer(i, v.to_dict()).to_dict()) + "\n" for i, v in enumerate(judged))
    )
    read = [caim_verdicts(p) for p in read_jsonl(path, Prediction)]
    assert read == judged
    keyed, unanswerable, unkeyed = judged
    assert set(keyed.to_dict()) == {"verdicts", "info"}  # no second shape on disk
    for m, v in keyed.verdicts.items():
        assert keyed.to_dict()["verdicts"][m] == v.to_dict() and v.judge == "caim_lexical"
    assert (
        keyed.scores["response_correctness"] == 0.5
        and keyed.verdicts["response_correctness"].raw == "0.5"
    )
    assert (
        keyed.verdicts["contextual_coherence"].failure
        == f"{UNAVAILABLE}: coherence offline (no lexical proxy)"
    )
    assert unanswerable.scores["response_correctness"] == 1.0
    assert unanswerable.verdicts["response_correctness"].label == CORRECT
    assert unanswerable.verdicts["memory_storage"].failure.startswith(
        f"{UNAVAILABLE}: not applicable"
    )
    assert not unanswerable.failures and not keyed.failures  # unavailable is not a judge failure
    assert set(unkeyed.scores.values()) == {None} and unkeyed.info == {"unkeyed": True}


def test_old_and_new_shapes_score_the_same() -> None:
    judged = LexicalCaimJudge().judge_many([KEYED, UNANSWERABLE, UNKEYED])
    new = [answer(i, v.to_dict()) for i, v in enumerate(judged)]
    old = [
        answer(
            i,
            {
                "scores": v.scores,
                "raw": {m: x.raw for m, x in v.verdicts.items() if x.raw},
                "failures": {},
                "info": v.info,
            },
        )
        for i, v in enumerate(judged)
    ]
    assert score_caim(new) == score_caim(old)
    scores, metrics = score_caim(new)
    assert (
        metrics["response_correctness"]["n"] == 2
        and metrics["response_correctness"]["n_unavailable"] == 1
    )
    assert metrics["response_correctness"]["value"] == pytest.approx(0.75)


class _Rubric(ReplyBackend):
    """Answers each CAIM rubric by its metric; storage gets an unparseable reply."""

    REPLIES = {
        "Retrieval Accuracy": "1",
        "Response Correctness": "0.5",
        "Contextual Coherence": "1",
        "Memory Storage": "maybe",
    }

    def complete(self, messages, dec):
        text = messages[-1]["content"]
        return Completion(next(r for k, r in self.REPLIES.items() if k in text), 12, 1, 0.0)


def test_llm_verdicts_carry_raw_usage_and_failures() -> None:
    judge = LLMCaimJudge(LLM(_Rubric()))
    keyed, unanswerable = judge.judge_many([KEYED, UNANSWERABLE])
    assert keyed.scores == {
        "retrieval_accuracy": 1.0,
        "response_correctness": 0.5,
        "contextual_coherence": 1.0,
        "memory_storage": 0.0,
    }
    storage = keyed.verdicts["memory_storage"]
    assert (
        storage.raw == "maybe" and not storage.parsed and storage.failure.startswith("parse failed")
    )
    assert keyed.failures == {"memory_storage": storage.failure}
    for v in keyed.verdicts.values():
        assert (v.judge, v.backend, v.model) == ("caim_llm", "script", "s")
        assert v.usage["prompt_tokens"] == 12 and v.prompt == judge.tasks["memory_storage"].source
    assert unanswerable.scores["response_correctness"] == 0.5
    assert unanswerable.verdicts["contextual_coherence"].failed(UNAVAILABLE)
    assert CaimVerdicts.from_dict(json.loads(json.dumps(keyed.to_dict()))) == keyed


@pytest.mark.parametrize(
    ("caim", "message"),
    [
        ({"score": 1}, "need 'verdicts'"),
        ({"scores": {"memory_storage": "1"}}, "memory_storage"),
        ({"verdicts": {"memory_storage": {"label": 7}}}, "label"),
        ([1], "JSON object"),
    ],
)
def test_bad_meta_caim_names_the_prediction(caim, message) -> None:
    with pytest.raises(ValueError, match=message) as err:
        caim_verdicts(answer(3, caim))
    assert "e/q3" in str(err.value) and "meta.caim" in str(err.value)


def test_unjudged_has_no_verdicts() -> None:
    assert caim_verdicts(Prediction("e/q", "e", 1, "answer", "q", "a")) is None
    with pytest.raises(ValueError, match="say why"):
        metric_verdict("memory_storage", None, "caim_lexical")
