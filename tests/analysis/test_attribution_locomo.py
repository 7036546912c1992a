"""Failure attribution of locomo_qa runs: given evidence, J as primary judge, per category."""

from __future__ import annotations

from test_attribution_runs import EP, tid, write_run

from recallbench.analysis import runs_in
from recallbench.analysis.attribution import run_items
from recallbench.metrics.attribution import classify
from recallbench.records import Prediction


def _answer(n: int, category: int, evidence: list[str], recalled: list[str], label, output="x"):
    meta: dict = {"qa_id": f"{EP}/q{n}", "category": category, "evidence": evidence}
    meta["subsets"] = ["single_hop", "answerable"] if category == 4 else ["adversarial"]
    if label is not None:
        meta["judge"] = {"label": label, "failure": None}
    ref = "Not mentioned in the conversation" if category == 5 else "ref"
    return Prediction(
        f"{EP}/q{n}/after_s2", EP, 2, "answer", "h", output, ref, tuple(recalled), meta=meta
    )


# the store after s2 (test_attribution_runs.SNAPSHOTS) holds s1/t1 and s2/t1, s1/t3 was forgotten
PREDS = [
    _answer(0, 4, [tid("s1", 1)], [tid("s1", 1)], 1),  # right
    _answer(1, 4, [tid("s1", 1)], [tid("s1", 1)], 0),  # recalled, answered wrong
    _answer(2, 4, [tid("s2", 1)], [], 0),  # held, not recalled
    _answer(3, 4, [tid("s1", 3)], [], 0),  # forgotten
    _answer(4, 4, [tid("s2", 3)], [], 0),  # never written
    _answer(5, 4, [], [], 0),  # cites no evidence
    _answer(6, 5, [tid("s1", 1)], [tid("s1", 1)], None, "Pixel"),  # took the bait
    _answer(7, 5, [tid("s1", 1)], [], None, "Not mentioned in the conversation"),
]
EXPECTED = {
    0: None,
    1: "reader_error",
    2: "not_retrieved",
    3: "not_in_memory",
    4: "not_in_memory",
    5: "evidence_unknown",
    6: "reader_error",
    7: None,
}


def test_locomo_items_classes_and_categories(tmp_path):
    write_run(tmp_path, {"name": "locomo_qa"}, PREDS)
    (run,) = runs_in(tmp_path)
    items, info = run_items(run)
    assert info.protocol == "locomo_qa"
    assert info.judges == ("J lexical", "LoCoMo F1")  # named after the run's judge
    got = {int(i.item_id.split("/q")[1].split("/")[0]): classify(i) for i in items}
    assert {k: (v.cls if v else None) for k, v in got.items()} == EXPECTED
    assert got[3].reason == "forgotten" and got[4].reason == "never_written"
    by_id = {i.item_id: i for i in items}
    assert by_id[f"{EP}/q1/after_s2"].others == {"LoCoMo F1": 0.0}
    single, _ = run_items(run, subset="single_hop")
    bait, _ = run_items(run, subset="adversarial")
    assert len(single) == 6 and len(bait) == 2
    assert [i.credit for i in bait] == [0.0, 1.0]  # LoCoMo's category-5 rule
