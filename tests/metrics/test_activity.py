"""Memory activity from snapshots and recalls: written / updated / deleted / retrieved by hand."""

from __future__ import annotations

import json

from recallbench.metrics.activity import activity_of_run, memory_activity, session_changes
from recallbench.records import MemoryItem, Prediction


def item(item_id: str, text: str = "t", status: str | None = None, **attrs) -> MemoryItem:
    if status is not None:
        attrs["status"] = status
    return MemoryItem(item_id, text, "fact", None, (), attrs)


def recall(session: int, n: int | None) -> Prediction:
    meta = {} if n is None else {"n_recalled": n}
    return Prediction(f"p{session}/{n}", "A", session, "response", "", "o", "r", meta=meta)


SNAPSHOTS = {
    # a is rewritten in s2, b retired (TimeRAG keeps it with status deleted), c written; in s3
    # b leaves the store (already retired: no second deletion), a's strength changes only.
    "A": [
        (1, [item("a", "likes tea", strength=1), item("b")]),
        (2, [item("a", "likes coffee", strength=1), item("b", status="deleted"), item("c")]),
        (3, [item("a", "likes coffee", strength=5), item("c")]),
    ],
    "B": [(1, []), (2, []), (3, [])],  # a memory that never writes
}


def test_session_changes_by_hand():
    before = {"a": item("a", "x"), "b": item("b"), "d": item("d", status="decayed")}
    after = {"a": item("a", "y"), "b": item("b", status="decayed"), "d": item("d"), "e": item("e")}
    # e written; a updated (text); b retired = deleted; d decayed -> active again = updated
    assert session_changes(before, after) == {"written": 1, "updated": 2, "deleted": 1, "store": 3}


def test_activity_per_session_and_totals():
    preds = [recall(2, 3), recall(2, 0), recall(3, 1), recall(3, None)]
    got = memory_activity(SNAPSHOTS, preds)
    s1, s2, s3 = (got["per_session"][k] for k in ("1", "2", "3"))
    assert (s1["episodes"], s1["written"], s1["deleted"], s1["store"]) == (2, 2, 0, 2)
    assert (s2["written"], s2["updated"], s2["deleted"], s2["store"]) == (1, 1, 1, 2)
    assert (s2["retrieved"], s2["recalls"], s2["empty_recalls"]) == (3, 2, 1)
    assert (s3["written"], s3["updated"], s3["deleted"], s3["store"]) == (0, 0, 0, 2)
    assert (s3["retrieved"], s3["recalls"]) == (1, 1)  # the prediction without n_recalled: none
    totals = got["totals"]
    assert (totals["episodes"], totals["written"], totals["updated"], totals["deleted"]) == (
        2,
        3,
        1,
        1,
    )
    assert (totals["store"], totals["retrieved"], totals["recalls"]) == (2, 4, 3)


def test_activity_of_a_run_folder(tmp_path):
    memory = tmp_path / "memory"
    memory.mkdir()
    for episode, rows in SNAPSHOTS.items():
        lines = [
            json.dumps({"after_session": i, "items": [m.to_dict() for m in items]})
            for i, items in rows
        ]
        (memory / f"{episode}.jsonl").write_text("\n".join(lines) + "\n\n", encoding="utf-8")
    assert activity_of_run(tmp_path, []) == memory_activity(SNAPSHOTS, [])
    assert activity_of_run(tmp_path / "none", [])["totals"]["episodes"] == 0
