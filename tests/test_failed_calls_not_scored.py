"""A failed LLM call's output is the task's fallback, not an answer: it is never scored."""

from __future__ import annotations

from recallbench.llm import CALL_FAILURE, PARSE_FAILURE
from recallbench.metrics.scoring import score_predictions
from recallbench.records import Prediction


def _pred(i: int, output: str, reference: str, failure: str | None = None) -> Prediction:
    return Prediction(f"p{i}", f"ep{i % 2}", 1, "response", "", output, reference, failure=failure)


def test_failed_calls_are_left_out_and_counted_parse_failures_stay():
    good = [_pred(0, "the cat sat", "the cat sat"), _pred(1, "a dog ran", "a dog ran")]
    failed = _pred(2, "", "words that an empty fallback would miss", f"{CALL_FAILURE}: timeout")
    unparsed = _pred(3, "the cat sat", "the cat sat", f"{PARSE_FAILURE}: ValueError")
    _, with_failed = score_predictions([*good, failed, unparsed], ["rouge_l"])
    _, clean = score_predictions([*good, unparsed], ["rouge_l"])
    assert with_failed["failed_calls_not_scored"] == 1
    assert clean["failed_calls_not_scored"] == 0
    assert with_failed["metrics"]["rouge_l"]["value"] == clean["metrics"]["rouge_l"]["value"] == 1.0
    assert with_failed["metrics"]["rouge_l"]["n"] == 3
