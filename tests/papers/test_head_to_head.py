"""THEANINE Fig. 5 head-to-head (recallbench.papers.theanine.head_to_head): the order swap
cancels position bias, the offline twin picks the helpful memory both ways, run folders in and
raw judge outputs out."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
import yaml

from recallbench.llm import LLM, Completion, build_llm
from recallbench.papers.theanine.head_to_head import compare, compare_runs, pair_predictions
from recallbench.records import Episode, Prediction, Session, Turn, write_jsonl
from recallbench.testing.backend import ReplyBackend

A, B = "Speaker A", "Speaker B"
TURNS = [
    (A, "How is your dog doing?"),
    (B, "Great, thanks."),
    (A, "Did you take him hiking?"),
    (B, "Yes, twice."),
]


def episode() -> Episode:
    turns = tuple(Turn(f"e/s3/t{j}", s, t) for j, (s, t) in enumerate(TURNS))
    return Episode("e", "toy", (A, B), (Session("e/s3", 3, datetime(2023, 1, 1), turns),))


def preds(recall: dict[str, str]) -> list[Prediction]:
    return [
        Prediction(
            f"e/s3/t{j}/response",
            "e",
            3,
            "response",
            "h",
            "out",
            TURNS[j][1],
            meta={"speaker": TURNS[j][0], "recall_text": recall.get(TURNS[j - 1][1], "")},
        )
        for j in range(1, len(TURNS))
    ]


HELPFUL = {
    "How is your dog doing?": "Speaker B has a dog named Max.",
    "Did you take him hiking?": "Speaker B loves hiking with the dog.",
}
UNHELPFUL = {"How is your dog doing?": "Speaker A works at a bakery."}


class FirstBiased(ReplyBackend):
    """A judge with pure position bias: always picks MEMORY 1."""

    name, local, offline, is_async, model, context_length = "script", True, False, False, "s", 9999

    def complete(self, messages, dec):
        return Completion("Explanation: looks good. Choice: 1", 10, 5, 0.0)

    def count_tokens(self, text):
        return len(text.split())

    def close(self):
        pass


def test_order_swap_cancels_position_bias():
    pairs = pair_predictions(preds(HELPFUL), preds(UNHELPFUL), ("a", "b"))
    result = compare(pairs, [episode()], LLM(FirstBiased()), names=("x", "y"))
    assert result.summary["tie"] == 1.0 and result.summary["n"] == 3
    assert result.rows[0]["raw_a_first"] == "Explanation: looks good. Choice: 1"


def test_offline_prefers_the_helpful_memory_both_ways():
    llm = build_llm({"backend": "extractive"})
    res = compare(pair_predictions(preds(HELPFUL), preds(UNHELPFUL), ("a", "b")), [episode()], llm)
    # contexts: after "How is your dog doing?" (A helpful), "Great, thanks." (both empty: tie),
    # "Did you take him hiking?" (A helpful, B has nothing)
    assert [r["outcome_a"] for r in res.rows] == ["win", "tie", "win"]
    back = compare(pair_predictions(preds(UNHELPFUL), preds(HELPFUL), ("b", "a")), [episode()], llm)
    assert back.summary["loss"] == pytest.approx(2 / 3) and back.summary["win"] == 0.0
    assert res.summary["sign_test_p"] == pytest.approx(0.5)  # 2 wins, 0 losses, two-sided


def test_run_folders_in_raw_outputs_out(tmp_path):
    runs = []
    for name, recall in (("theanine", HELPFUL), ("memory_retrieval", UNHELPFUL)):
        run = tmp_path / name
        write_jsonl(run / "predictions.jsonl", preds(recall))
        (run / "config.yaml").write_text(yaml.safe_dump({"choices": {"memory": name}}))
        runs.append(run)
    result = compare_runs(*runs, build_llm({"backend": "extractive"}), [episode()], max_episodes=5)
    path = result.write(tmp_path / "out")
    summary = json.loads(path.read_text())
    assert (summary["a"], summary["b"], summary["counts"]) == (
        "theanine",
        "memory_retrieval",
        {"win": 2, "tie": 1, "loss": 0},
    )
    rows = (tmp_path / "out" / "geval_theanine_vs_memory_retrieval.jsonl").read_text().splitlines()
    assert len(rows) == 3 and "Choice:" in json.loads(rows[0])["raw_b_first"]


def test_missing_recall_text_names_the_file():
    bare = [Prediction("e/s3/t1/response", "e", 3, "response", "h", "o", meta={"speaker": B})]
    with pytest.raises(KeyError, match=r"run a: prediction 'e/s3/t1/response' has no meta"):
        compare(
            pair_predictions(bare, bare, ("run a", "run b")),
            [episode()],
            build_llm({"backend": "extractive"}),
        )
    with pytest.raises(ValueError, match="share no response predictions"):
        pair_predictions(bare, [], ("x", "y"))
