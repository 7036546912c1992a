"""analysis.mem0_credit: one run's recalls scored under both Mem0 credits, paired by question."""

from __future__ import annotations

import json

import pytest

from recallbench.analysis.mem0_credit import (
    agreement,
    answers,
    batch_sources,
    compare,
    paired_rows,
    read_batches,
    recorded_recall,
    versus,
)
from recallbench.records import MemoryItem, Prediction


def _item(i: int, source: str, batch: list[str], credit: str = "source_turn") -> dict:
    attrs = {"speaker": "A", "session": 1}
    if credit == "source_turn":
        attrs["batch_turn_ids"] = batch
    sources = (source,) if credit == "source_turn" else tuple(batch)
    return MemoryItem(f"e/mem0/{i}", f"fact {i}", "fact", None, sources, attrs).to_dict()


def _answer(episode: str, q: int, evidence: list[str], recalled: list[list[str]], kind: str):
    meta = {"evidence": evidence, "recalled_sources": recalled, "subsets": [kind, "answerable"]}
    return Prediction(f"{episode}/q{q}/after_s1", episode, 1, "answer", "", "x", meta=meta)


def _run(tmp_path, episodes: dict[str, list[dict]], preds: list[Prediction]):
    (tmp_path / "memory").mkdir(parents=True)
    for episode, items in episodes.items():
        row = {"after_session": 1, "items": items}
        (tmp_path / "memory" / f"{episode}.jsonl").write_text(json.dumps(row) + "\n")
    lines = [p.to_json() for p in preds]
    (tmp_path / "predictions.jsonl").write_text("\n".join(lines) + "\n")
    return tmp_path


def _two_episodes(tmp_path):
    # per episode: batch (1, 2) holds a memory from turn 1 and one from turn 2 (two scopes)
    items = {
        e: [_item(0, f"{e}/1", [f"{e}/1", f"{e}/2"]), _item(1, f"{e}/2", [f"{e}/1", f"{e}/2"])]
        for e in ("e1", "e2")
    }
    preds = [
        # evidence turn 2, the top memory is turn 1's: batch credits it, source turn does not
        _answer("e1", 0, ["e1/2"], [["e1/1"], ["e1/2"]], "temporal"),
        _answer("e2", 0, ["e2/2"], [["e2/1"], ["e2/2"]], "temporal"),
        # evidence turn 1 at rank 1: the same either way
        _answer("e1", 1, ["e1/1"], [["e1/1"]], "single_hop"),
        _answer("e2", 1, ["e2/1"], [["e2/1"]], "single_hop"),
        _answer("e2", 2, [], [["e2/1"]], "single_hop"),  # no evidence: not scored
    ]
    return _run(tmp_path / "run", items, preds)


def test_batches_map_each_source_turn_back_to_its_batch(tmp_path):
    run = _two_episodes(tmp_path)
    batches = read_batches(run)
    assert batches["e1/2"] == ("e1/1", "e1/2") and batches["e2/1"] == ("e2/1", "e2/2")
    first = answers(run)[0]
    assert batch_sources(first, batches) == [["e1/1", "e1/2"], ["e1/1", "e1/2"]]


def test_recall_at_1_hand_checked_and_paired(tmp_path):
    run = _two_episodes(tmp_path)
    rows = paired_rows(answers(run), read_batches(run), k=1)
    assert [(r[0], r[2], r[3]) for r in rows] == [
        ("e1", 0.0, 1.0),
        ("e2", 0.0, 1.0),
        ("e1", 1.0, 1.0),
        ("e2", 1.0, 1.0),
    ]
    table = compare(rows)
    assert table["temporal"]["n"] == 2 and table["single_hop"]["n"] == 2
    assert table["temporal"]["batch"] == 1.0 and table["temporal"]["source_turn"] == 0.0
    assert table["temporal"]["diff"] == -1.0 and table["temporal"]["changed"] == 2
    assert table["single_hop"]["diff"] == 0.0 and table["single_hop"]["changed"] == 0
    assert table["all"]["n"] == 4 and table["all"]["diff"] == -0.5
    assert table["all"]["n_clusters"] == 2 and table["all"]["ci"] is not None
    # at k=2 the memory of turn 2 is in: no difference left
    assert compare(paired_rows(answers(run), read_batches(run), k=2))["all"]["diff"] == 0.0


def test_agreement_with_a_batch_run(tmp_path):
    run = _two_episodes(tmp_path)
    batches = read_batches(run)
    theirs = [
        _answer("e1", 0, ["e1/2"], [["e1/1", "e1/2"], ["e1/1", "e1/2"]], "temporal"),
        _answer("e1", 1, ["e1/1"], [["e1/1", "e1/2"], ["e1/1", "e1/2"]], "single_hop"),  # longer
    ]
    assert agreement(answers(run), theirs, batches) == (1, 2, ["e1/q1/after_s1"])


def test_a_batch_credit_run_or_an_unknown_turn_is_named(tmp_path):
    batch_run = _run(tmp_path / "b", {"e1": [_item(0, "", ["e1/1", "e1/2"], "batch")]}, [])
    with pytest.raises(
        ValueError, match=r"episode 'e1' session 1: item 'e/mem0/0' has no batch_turn_ids"
    ):
        read_batches(batch_run)
    run = _two_episodes(tmp_path)
    stray = _answer("e1", 9, ["e1/2"], [["e1/7"]], "temporal")
    with pytest.raises(KeyError, match="e1/q9/after_s1: recalled turn 'e1/7'"):
        batch_sources(stray, read_batches(run))


def test_versus_another_runs_recorded_recall(tmp_path):
    run = _two_episodes(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    rows = [
        {"pred_id": f"{e}/q{q}/after_s1", "metric": "recall_at_1", "value": v}
        for e, q, v in (("e1", 0, 1.0), ("e2", 0, 0.0), ("e1", 1, 0.0), ("e2", 1, 0.0))
    ]
    rows.append({"pred_id": "e1/q0/after_s1", "metric": "recall_at_5", "value": 0.25})
    (other / "scores.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    theirs = recorded_recall(other, 1)
    assert theirs["e1/q0/after_s1"] == 1.0 and len(theirs) == 4
    vs = versus(answers(run), read_batches(run), 1, theirs, "answerable")
    # ours at k=1: source turn [0, 0, 1, 1] = 0.5, batch [1, 1, 1, 1] = 1.0; theirs 0.25
    assert vs["source_turn"]["n"] == 4 and vs["source_turn"]["diff"] == pytest.approx(0.25)
    assert vs["batch"]["value"] == 1.0 and vs["batch"]["diff"] == pytest.approx(0.75)
    with pytest.raises(ValueError, match="no recall_at_10 scores"):
        recorded_recall(other, 10)
