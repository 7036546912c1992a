"""Failure attribution classes (``metrics.attribution``) on hand-made item facts."""

from __future__ import annotations

import pytest

from recallbench.metrics.attribution import ItemFacts, classify, contested, covers, summarize

E = ("t1", "t2")


def item(name: str, credit: float = 0.0, outcome: str = "wrong", **kw) -> ItemFacts:
    kw.setdefault("evidence", E)
    return ItemFacts(name, kw.pop("episode", "ep1"), credit, outcome, **kw)


def cls(i: ItemFacts, cover: str = "all") -> str | None:
    got = classify(i, cover)  # type: ignore[arg-type]
    return None if got is None else got.cls


def test_correct_item_is_not_a_failure():
    assert classify(item("a", 1.0, "correct", held=frozenset(E))) is None


@pytest.mark.parametrize(
    ("facts", "expected", "reason"),
    [
        # the store lost one of the two evidence turns, an earlier store held both
        (
            {"held": frozenset({"t1"}), "ever_held": frozenset(E)},
            "not_in_memory",
            "forgotten",
        ),
        ({"held": frozenset(), "ever_held": frozenset({"t2"})}, "not_in_memory", "never_written"),
        ({"held": frozenset(E), "recalled": frozenset({"t2"})}, "not_retrieved", ""),
        ({"held": frozenset(E), "recalled": frozenset(E)}, "reader_error", ""),
        ({"evidence": (), "unknown": "no turn covers it"}, "evidence_unknown", "no turn covers it"),
    ],
)
def test_each_class_by_its_rule(facts, expected, reason):
    got = classify(item("a", **facts))
    assert got is not None and (got.cls, got.reason) == (expected, reason)


def test_judge_disagreement_comes_first():
    # evidence never written, but the second judge fully accepts: the failure itself is in doubt
    facts = item("a", 0.5, "partial", others={"C.1 lexical": 1.0})
    got = classify(facts)
    assert got is not None and got.cls == "judge_disagreement"
    assert got.reason == "accepted by C.1 lexical"
    # another judge that also rejects (0.5 vs 0) is no disagreement about the failure
    assert cls(item("b", 0.0, "wrong", others={"x": 0.5})) == "not_in_memory"


def test_dont_know_and_partial_answers_are_attributed_like_wrong_ones():
    held = {"held": frozenset(E), "recalled": frozenset(E)}
    assert cls(item("a", 0.0, "dont_know", **held)) == "reader_error"
    assert cls(item("b", 0.5, "partial", **held)) == "reader_error"
    assert classify(item("c", 0.0, "dont_know", **held)).outcome == "dont_know"  # type: ignore[union-attr]


def test_cover_any_needs_one_unit():
    half = {"held": frozenset({"t1"}), "recalled": frozenset({"t2"})}
    assert cls(item("a", **half), "all") == "not_in_memory"
    # any: t1 is held; t2 was recalled, which also counts as the evidence being retrieved
    assert cls(item("a", **half), "any") == "reader_error"
    assert covers({"t1"}, E, "any") and not covers({"t1"}, E, "all")
    assert not covers({"t1"}, (), "all")  # no evidence is never covered


def test_contested_correct():
    assert contested(item("a", 1.0, "correct", others={"C.1": 0.0}))
    assert not contested(item("a", 1.0, "correct", others={"C.1": 1.0}))
    assert not contested(item("a", 0.0, "wrong", others={"C.1": 0.0}))


def test_bad_facts_are_refused():
    with pytest.raises(ValueError, match="outcome"):
        item("a", outcome="fine")
    with pytest.raises(ValueError, match="credit"):
        item("a", credit=1.5)


def test_summary_shares_by_hand():
    both = frozenset(E)
    items = [
        # ep1: 1 correct, 1 not retrieved, 1 reader error (a don't know)
        item("a", 1.0, "correct", held=both, recalled=both),
        item("b", held=both),
        item("c", 0.0, "dont_know", held=both, recalled=both),
        # ep2: 1 forgotten, 1 evidence unknown, 1 correct
        item("d", episode="ep2", ever_held=both),
        item("e", episode="ep2", evidence=()),
        item("f", 1.0, "correct", episode="ep2"),
    ]
    s = summarize(items)
    assert (s["items"], s["failures"], s["episodes"]) == (6, 4, 2)
    assert s["accuracy"]["value"] == pytest.approx(2 / 6)
    shares = {k: v["value"] for k, v in s["shares"].items()}
    assert shares == pytest.approx(
        {
            "judge_disagreement": 0.0,
            "evidence_unknown": 0.25,
            "not_in_memory": 0.25,
            "not_retrieved": 0.25,
            "reader_error": 0.25,
        }
    )
    assert s["shares"]["judge_disagreement"]["applicable"] is False  # one judge only
    assert s["not_in_memory_reasons"]["forgotten"]["value"] == 1.0
    assert s["failure_outcomes"]["dont_know"]["value"] == pytest.approx(0.25)
    assert s["failure_rate"]["value"] == pytest.approx(4 / 6)
    # two episodes -> an interval that brackets the value
    low, high = s["shares"]["reader_error"]["ci95"]
    assert low <= 0.25 <= high and s["shares"]["reader_error"]["n_clusters"] == 2
    assert {a["item_id"]: a["class"] for a in s["attributions"]} == {
        "b": "not_retrieved",
        "c": "reader_error",
        "d": "not_in_memory",
        "e": "evidence_unknown",
    }


def test_summary_with_two_judges_makes_disagreement_applicable():
    s = summarize([item("a", 0.5, "partial", others={"C.1": 1.0})])
    assert "applicable" not in s["shares"]["judge_disagreement"]
    assert s["shares"]["judge_disagreement"]["value"] == 1.0
    assert s["shares"]["judge_disagreement"]["ci95"] is None  # one episode: no interval
