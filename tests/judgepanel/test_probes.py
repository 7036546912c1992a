"""The probes' construction: derangement, vague, verbose, empty, specific-but-wrong."""

from __future__ import annotations

import pytest

from recallbench.judgepanel import (
    PROBES,
    Question,
    build_probes,
    derangement,
    vague_answer,
)
from recallbench.judges.lexical import LexicalJudge, match
from recallbench.text import answer_content, answer_words, light_stem

QUESTIONS = [
    Question("e1/q1", "e1", "What is Zoe's dog called?", "Biscuit."),
    Question("e1/q2", "e1", "Where did Zoe travel last summer?", "Sapporo, in Hokkaido."),
    Question("e1/q3", "e1", "What kind of dog does Zoe want?", "A poodle dog."),
    Question("e2/q1", "e2", "What does Ken do for work?", "He is a nurse."),
    Question("e2/q2", "e2", "Does Ken like tea?", "Yes."),
    Question("e2/q3", "e2", "What sport does Ken play?", "Tennis."),
    Question("e2/q4", "e2", "What does Ken collect?", "Vintage stamps."),
    Question("e2/q5", "e2", "What is Ken's hobby?", "Ken's hobby is surfing."),
]
MEMORY = {
    "e1": ["Zoe enjoys hiking in the mountains.", "Zoe bakes bread every Sunday morning."],
    "e2": ["Ken is learning the violin.", "Ken went to the beach in July."],
}


def _gold_words(text: str) -> set[str]:
    return {light_stem(w) for w in answer_content(answer_words(text))}


@pytest.mark.parametrize("n", [2, 3, 4, 7, 50])
@pytest.mark.parametrize("seed", range(8))
def test_derangement_has_no_fixed_points(n, seed):
    perm, conflicts = derangement(n, seed)
    assert sorted(perm) == list(range(n)) and conflicts == []
    assert all(perm[i] != i for i in range(n))
    assert derangement(n, seed) == (perm, [])  # seeded: the same every time


def test_derangement_differs_by_seed_and_rejects_one_item():
    assert len({tuple(derangement(9, s)[0]) for s in range(10)}) > 1
    with pytest.raises(ValueError, match="at least 2"):
        derangement(1, 0)


def test_derangement_repairs_forbidden_pairs():
    # items 0 and 1 may not take each other's answers; 4 items leave room to swap
    def ok(i, j):
        return {i, j} != {0, 1}

    for seed in range(20):
        perm, conflicts = derangement(4, seed, ok)
        assert conflicts == [] and all(perm[i] != i and ok(i, perm[i]) for i in range(4))
        assert sorted(perm) == [0, 1, 2, 3]


def test_vague_answer_by_hand():
    # topic words of the question in order (stopwords "what", "is" dropped), none of the gold's
    assert vague_answer(QUESTIONS[0]) == (
        "They mentioned something about zoe, dog and called once, but that was a while back."
    )
    # "dog" is in the gold answer ("A poodle dog"), so it leaves the topic
    assert vague_answer(QUESTIONS[2]) == (
        "They mentioned something about kind, zoe and want once, but that was a while back."
    )


def test_a_gold_answer_that_restates_the_question_bans_only_its_answer_words():
    # every content word of the question is in the gold answer: only "surfing" answers
    assert vague_answer(QUESTIONS[-1]) == (
        "They mentioned something about ken and hobby once, but that was a while back."
    )


def test_vague_answers_contain_no_gold_content_words():
    probes, _ = build_probes(QUESTIONS, MEMORY, seed=0, kinds=("vague",))
    assert len(probes) == len(QUESTIONS)
    for p in probes:
        gold, asked = _gold_words(p.question.reference), _gold_words(p.question.question)
        key = {light_stem(w) for w in match(p.question.question, p.question.reference, "").key}
        assert not _gold_words(p.answer) & key, p.answer  # never a word that answers
        if asked - gold:  # the question has a topic word of its own: no gold word at all
            assert not _gold_words(p.answer) & gold, p.answer
        assert not match(p.question.question, p.question.reference, p.answer).matched
        topic = (asked - gold) or (asked - key)  # restated question words are topic too
        assert topic & _gold_words(p.answer), "a vague answer is about the question's topic"
        assert LexicalJudge().label(p.question.question, p.question.reference, p.answer)[0] == 0


def test_verbose_contains_the_gold_answer_and_verbose_wrong_none_of_it():
    probes, counts = build_probes(QUESTIONS, MEMORY, seed=3, n_distractors=4)
    by = {(p.kind, p.question.key): p for p in probes}
    for q in QUESTIONS:
        verbose, wrong = by["verbose", q.key], by["verbose_wrong", q.key]
        assert q.reference in verbose.answer
        assert len(verbose.answer) > 2 * len(q.reference)  # padded
        assert wrong.answer == verbose.answer.replace(q.reference, "").replace("  ", " ").strip()
        assert not _gold_words(wrong.answer) & _gold_words(q.reference)
    assert counts["missing_verbose"] == 0


def test_empty_is_empty_and_gold_is_gold():
    probes, _ = build_probes(QUESTIONS, MEMORY, kinds=("empty", "gold"))
    assert [p.answer for p in probes if p.kind == "empty"] == [""] * len(QUESTIONS)
    assert [p.answer for p in probes if p.kind == "gold"] == [q.reference for q in QUESTIONS]


def test_specific_wrong_is_another_questions_answer_without_shared_content():
    probes, counts = build_probes(QUESTIONS, MEMORY, seed=5, kinds=("specific_wrong",))
    assert len(probes) == len(QUESTIONS)
    references = {q.key: q.reference for q in QUESTIONS}
    for p in probes:
        assert p.source != p.question.key and p.answer == references[p.source]
        assert not _gold_words(p.answer) & _gold_words(p.question.reference)
        assert p.answer != "Yes."  # no content words: not a specific answer
    # "Yes." can donate to nobody, so one question needed a fallback donor
    assert counts["specific_wrong_fallbacks"] >= 1


def test_probes_are_deterministic_per_seed():
    first, _ = build_probes(QUESTIONS, MEMORY, seed=1)
    again, _ = build_probes(QUESTIONS, MEMORY, seed=1)
    other, _ = build_probes(QUESTIONS, MEMORY, seed=2)
    assert first == again and first != other
    assert {p.kind for p in first} == set(PROBES)


def test_unknown_probe_is_an_error():
    with pytest.raises(ValueError, match="unknown probes"):
        build_probes(QUESTIONS, MEMORY, kinds=("vauge",))
