"""What a dataset provides (``datasets.needs.provided``) on hand-built episodes, and what the
methods and protocols that need something say they need."""

from __future__ import annotations

from datetime import datetime

from recallbench.datasets import needs
from recallbench.records import Episode, QAItem, Session, Turn

T0 = datetime(2024, 1, 1)


def _session(ep: str, index: int, start=T0, **gold) -> Session:
    return Session(f"{ep}/s{index}", index, start, (Turn(f"{ep}/s{index}/t1", "A", "hi"),), gold)


def test_dated_sessions_need_every_session_dated():
    dated = Episode("e1", "x", ("A", "B"), (_session("e1", 1), _session("e1", 2)))
    half = Episode("e2", "x", ("A", "B"), (_session("e2", 1), _session("e2", 2, start=None)))
    assert needs.DATED in needs.provided([dated])
    assert needs.DATED not in needs.provided([dated, half])


def test_questions_answers_and_an_answer_key():
    unanswered = QAItem("q1", "Where?", (), 1)
    keyed = QAItem("q2", "Where?", (), 1, meta={"answerable": True})
    answered = QAItem("q3", "Where?", ("Paris",), 1)
    base = (_session("e", 1),)
    facts = needs.provided([Episode("e", "x", ("A",), base, qa=(unanswered,))])
    assert needs.QA_ITEMS in facts and needs.QA_ANSWERS not in facts and needs.QA_KEY not in facts
    facts = needs.provided([Episode("e", "x", ("A",), base, qa=(keyed, answered))])
    assert {needs.QA_ITEMS, needs.QA_ANSWERS, needs.QA_KEY} <= facts
    assert needs.QA_ITEMS not in needs.provided([Episode("e", "x", ("A",), base)])


def test_gold_keys_must_be_in_every_episode():
    with_memory = Episode("e1", "x", ("A",), (_session("e1", 1), _session("e1", 2, memory=["m"])))
    without = Episode("e2", "x", ("A",), (_session("e2", 1, summary=["s"]),))
    assert needs.gold("memory") in needs.provided([with_memory])
    both = needs.provided([with_memory, without])
    assert needs.gold("memory") not in both  # e2 has no gold memory anywhere
    assert needs.GOLD_SUMMARY not in both  # e1 has no summary or persona
    assert needs.GOLD_SUMMARY in needs.provided([without])
    assert needs.gold("auto") == needs.GOLD_SUMMARY


def test_sessions_present_and_missing_facts():
    ep = Episode("e", "x", ("A",), (_session("e", 1), _session("e", 3)))
    facts = needs.provided([ep])
    assert {needs.session(1), needs.session(3)} <= facts and needs.session(2) not in facts
    assert needs.missing({needs.session(3), needs.DATED, "gold memory"}, facts) == ("gold memory",)
    assert needs.provided([]) == frozenset()
