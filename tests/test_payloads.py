"""Typed ``Prediction.meta`` per kind (``recallbench.payloads``): checked reads, same keys on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recallbench.cli import compose_job, run
from recallbench.payloads import (
    KINDS,
    AnswerMeta,
    TeaFarmMeta,
    answer_meta,
    memory_meta,
    meta_of,
    response_meta,
    to_json,
)
from recallbench.records import Prediction, read_jsonl
from recallbench.verdict import verdict_of

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "fixtures"

# A line of predictions.jsonl as TeaFarm wrote it before issue 47 (its own judge dict).
OLD_TEAFARM_LINE = {
    "pred_id": "test_35-q1/teafarm",
    "episode_id": "test_35",
    "session_index": 6,
    "kind": "teafarm",
    "prompt_hash": "ab12",
    "output": "No, Max is a dog!",
    "reference": "No, I have a dog named Max.",
    "meta": {
        "qid": "test_35-q1",
        "question": "So you have a cat named Max, right?",
        "asker": "Speaker A",
        "responder": "Speaker B",
        "session6": [["Speaker A", "Hi"]],
        "source_dataset": "msc",
        "question_source": "offline",
        "recall_text": "",
        "n_recalled": 0,
        "memory_changed_by_recall": False,
        "judge": {
            "correct": True,
            "raw": "Correct",
            "parsed": True,
            "failure": None,
            "usage": {},
            "backend": "extractive",
            "model": "extractive",
            "prompt": "TeaFarm Fig. 29",
        },
    },
}


def test_an_old_teafarm_folder_scores_and_shows_as_before():
    from recallbench.protocols.teafarm import TeaFarmProtocol
    from recallbench.view.timeline import problems_of

    right = Prediction.from_dict(OLD_TEAFARM_LINE)
    line = json.loads(json.dumps(OLD_TEAFARM_LINE))
    line["pred_id"], line["meta"]["judge"]["correct"] = "test_35-q2/teafarm", False
    line["meta"]["judge"]["parsed"] = False
    wrong = Prediction.from_dict(line)
    scores, summary = TeaFarmProtocol().score([right, wrong])
    assert [s.value for s in scores] == [1.0, 0.0]
    assert summary["metrics"]["success_rate"]["value"] == 0.5
    assert summary["teafarm"]["judges"] == ["extractive:extractive"]
    assert summary["teafarm"]["judge_parse_failures"] == 1
    assert problems_of(wrong) == ["judge reply not parsed: 'Correct'"]


def _answer(**meta: object) -> Prediction:
    return Prediction("q1/after_s2", "e1", 2, "answer", "h", "out", meta=dict(meta))


def test_an_old_line_reads_typed_and_writes_back_the_same_keys():
    p = Prediction.from_dict(json.loads(json.dumps(OLD_TEAFARM_LINE)))
    meta = meta_of(p, TeaFarmMeta)
    assert meta["source_dataset"] == "msc" and meta["memory_changed_by_recall"] is False
    assert to_json(meta) == OLD_TEAFARM_LINE["meta"]  # on disk: the same keys both ways
    verdict = verdict_of(p)
    assert verdict is not None and verdict.correct


def test_answer_meta_checks_each_key_type_and_names_the_prediction():
    ok = answer_meta(_answer(qa_id="q1", question="Who?", question_session=1, category=2))
    assert ok["question_session"] == 1
    with pytest.raises(ValueError, match=r"q1/after_s2 \(answer\): meta.question_session should"):
        answer_meta(_answer(qa_id="q1", question_session="1"))
    with pytest.raises(ValueError, match="meta.category should be int, got True"):
        answer_meta(_answer(category=True))  # a JSON bool is not a category
    with pytest.raises(ValueError, match="meta.judges should"):
        answer_meta(_answer(judges={"audit": "yes"}))


def test_nested_and_optional_shapes_are_checked():
    resp = Prediction("t/response", "e1", 2, "response", "h", "out", meta={"retrieval": None})
    assert response_meta(resp)["retrieval"] is None
    resp = Prediction("t/response", "e1", 2, "response", "h", "", meta={"retrieval": {"ranks": 1}})
    with pytest.raises(ValueError, match="meta.retrieval should"):
        response_meta(resp)


def test_the_wrong_kind_is_refused_and_unknown_keys_are_kept():
    state = Prediction("e1/s1/memory", "e1", 1, "memory", "", "", meta={"n_items": 3, "new": 1})
    assert memory_meta(state)["n_items"] == 3 and to_json(memory_meta(state))["new"] == 1
    with pytest.raises(ValueError, match="kind 'memory' has no AnswerMeta"):
        meta_of(state, AnswerMeta)


def test_the_inventory_covers_every_kind_a_protocol_writes():
    written = {"answer", "response", "memory", "timing", "teafarm", "teafarm_generation"}
    written |= {"lamp1", "memory_set", "memory_pair", "memory_write"}
    assert set(KINDS) == written


def test_timerag_responses_and_memory_writes_read_typed(tmp_path):
    cfg, _ = compose_job(
        [
            f"paths.results_dir={tmp_path}",
            f"dataset.data_dir={FIXTURES}",
            "dataset=msc",
            "memory=no_memory_timerag",
            "protocol=response_timerag",
            "embedder=hashing",
            "generator=extractive",
            "metrics=lexical",
            "progress=false",
            "wandb.mode=disabled",
        ]
    )
    folder = run(cfg, "timerag", {})
    assert folder is not None
    preds = read_jsonl(folder / "predictions.jsonl", Prediction)
    kinds = {p.kind for p in preds}
    assert {"response", "memory_write"} <= kinds
    for p in preds:
        meta = meta_of(p, KINDS[p.kind])
        assert set(meta) <= set(KINDS[p.kind].__annotations__), (p.kind, sorted(meta))
