"""Memory activity from snapshots and recalls: written / updated / deleted / retrieved by hand."""

from __future__ import annotations

from recallbench.metrics.activity import memory_activity, session_changes
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
    assert session_changes(before, after) == {
        "written": 1,
        "updated": 2,
        "deleted": 1,
        "returned": 1,  # d, back into memory: store 3 = 2 before + 1 written - 1 deleted + 1
        "store": 3,
    }


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


def test_live_store_sums_each_episode_own_last_store():
    # A ends at session 3 with 2 items, C at session 1 with 5: 7 in memory at the end, not
    # the 2 of the largest session index (the old rule dropped C, then divided by 3 episodes).
    snapshots = {**SNAPSHOTS, "C": [(1, [item(f"c{i}") for i in range(5)])]}
    totals = memory_activity(snapshots, [])["totals"]
    assert (totals["episodes"], totals["written"], totals["deleted"], totals["store"]) == (
        3,
        8,
        1,
        7,
    )


def test_lufy_forgetting_is_a_deletion_in_its_session():
    # LUFY's snapshot keeps what the session's forgetting dropped (retained: false), once; the
    # next snapshot no longer lists it. x is written and forgotten in s1, y forgotten in s2.
    rows = [
        (1, [item("x", retained=False), item("y", retained=True)]),
        (2, [item("y", retained=False), item("z", retained=True)]),
        (3, [item("z", retained=True)]),
    ]
    got = memory_activity({"L": rows}, [])
    s1, s2, s3 = (got["per_session"][k] for k in ("1", "2", "3"))
    assert (s1["written"], s1["deleted"], s1["store"]) == (2, 1, 1)
    assert (s2["written"], s2["deleted"], s2["store"]) == (1, 1, 1)
    assert (s3["written"], s3["deleted"], s3["store"]) == (0, 0, 1)
    totals = got["totals"]
    assert totals["store"] == totals["written"] - totals["deleted"] == 1


def test_decayed_counts_as_deleted_only_when_recall_skips_it():
    rows = [(1, [item("a"), item("b")]), (2, [item("a", status="decayed"), item("b")])]
    skipping = memory_activity({"T": rows}, [])["per_session"]["2"]
    recalling = memory_activity({"T": rows}, [], decayed=True)["per_session"]["2"]
    assert (skipping["deleted"], skipping["store"]) == (1, 1)
    assert (recalling["deleted"], recalling["store"]) == (0, 2)
