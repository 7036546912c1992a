"""TeaFarm's offline twins: the no-LLM implementations of ``_tasks``' four tasks.

Offline twins (the ``extractive`` backend; a documented no-LLM stand-in, never the paper's GPT-4):
the summary keeps first-person statements rewritten in the third person; the question generator
negates the newest fact about the asked speaker (dropping its negation, "B doesn't own a car" ->
"you own a car"; swapping a noun, "dog" -> "cat"; or else presupposing the fact is over);
session 6 is a fixed small-talk template on the last session's topic; the judge is lexical (the
response wins words of the correct answer that the question lacks -> Correct; it wins the
question's own words -> Incorrect; a tie goes to a correction cue).
"""

from __future__ import annotations

import re
from functools import partial

from recallbench.text import answer_content as content
from recallbench.text import answer_words as words
from recallbench.text import light_stem as stem

_FIRST_TO_THIRD = {"am": "is", "have": "has", "do": "does"}
_SWAPS = dict(
    pair
    for a, b in [
        ("dog", "cat"),
        ("dogs", "cats"),
        ("car", "motorbike"),
        ("sister", "brother"),
        ("son", "daughter"),
        ("husband", "wife"),
        ("boyfriend", "girlfriend"),
        ("tea", "coffee"),
        ("summer", "winter"),
        ("piano", "guitar"),
        ("basketball", "soccer"),
        ("tennis", "golf"),
        ("japan", "france"),
        ("city", "countryside"),
        ("cooking", "baking"),
        ("apartment", "house"),
        ("morning", "evening"),
        ("teacher", "nurse"),
        ("running", "swimming"),
        ("pizza", "sushi"),
    ]
    for pair in ((a, b), (b, a))
)
_TO_BASE = {"has": "have", "is": "are", "does": "do", "goes": "go"}
_CORRECTION = {"no", "not", "never", "actually", "don't", "didn't", "haven't", "isn't", "nope"}


# third-person negated auxiliaries -> (after "you", after "I")
_NEGATED = {
    "doesn't": ("don't", "don't"),
    "isn't": ("aren't", "am not"),
    "hasn't": ("haven't", "haven't"),
    "wasn't": ("weren't", "wasn't"),
}
_NEGATION = re.compile(r"\b(doesn't|does not|don't|do not|isn't|is not|never|no longer)\s+")
_AFFIRM = {"isn't": "is ", "is not": "is ", "no longer": "still "}
_ADVERB = r"(?:(?:still|also|never|really|just|always|no longer|now)\s+)?"
_NOT_VERBS = {"always", "sometimes", "perhaps", "this", "thus", "plus", "also", "less", "was"}


def _verb_for(subject: str, word: str) -> str:
    """Conjugate the word after a rewritten subject ("has" -> "have", "is" -> "am"/"are")."""
    low = word.lower()
    if low in _NEGATED:
        return _NEGATED[low][subject == "I"]
    if low == "was":
        return "were" if subject == "you" else "was"
    if low in _TO_BASE:
        base = _TO_BASE[low]
        return "am" if base == "are" and subject == "I" else base
    if low in _NOT_VERBS or not low.endswith("s") or low.endswith(("ss", "us", "is")):
        return word
    if low.endswith("ies") and len(low) > 4:
        return low[:-3] + "y"
    if low.endswith(("ches", "shes", "sses", "xes", "zes")):
        return low[:-2]
    return low[:-1] if len(low) > 3 else word


def _subject_and_verb(subject: str, m: re.Match[str]) -> str:
    """Replace a matched ``<name> <adverb?> <verb>`` by ``subject`` and the verb conjugated."""
    return f"{subject}{m[1]}{_verb_for(subject, m[2])}"


def _person(sentence: str, name: str, other: str, second: bool) -> str:
    """Rewrite a third-person fact about ``name`` as said to (second) or by (first) them."""
    mine = ("you", "you", "your") if second else ("I", "me", "my")
    theirs = ("I", "me", "my") if second else ("you", "you", "your")
    text = sentence.strip().rstrip(".!")
    for who, (subj, obj, poss) in ((name, mine), (other, theirs)):
        n = re.escape(who)
        text = re.sub(rf"\b{n}'s\b", poss, text)
        text = re.sub(
            rf"\b{n}(\s+{_ADVERB})(\w+(?:'\w+)?)",
            partial(_subject_and_verb, subj),
            text,
        )
        text = re.sub(rf"\b{n}\b", obj, text)
    return re.sub(r"\b(his|her|their)\b", mine[2], text)


_I = r"(?<![\w'])I"  # the pronoun "I" wherever a clause starts with it ("... and I may move")


def third_person(sent: str, speaker: str) -> str:
    """Rewrite a first-person sentence of ``speaker`` in the third person (every clause)."""
    sent = re.sub(_I + r" don't\b", f"{speaker} doesn't", sent)
    sent = re.sub(_I + r"'d\b", f"{speaker} would", sent)
    sent = re.sub(_I + r"'ll\b", f"{speaker} will", sent)
    sent = re.sub(
        _I + r" (can't|won't|cannot|never|also|really|just|used)\b", rf"{speaker} \1", sent
    )
    sent = re.sub(_I + r"'m\b", f"{speaker} is", sent)
    sent = re.sub(_I + r"'ve\b", f"{speaker} has", sent)
    sent = re.sub(r"^My\b", f"{speaker}'s", sent)
    sent = re.sub(_I + r" (am|have|do)\b", lambda m: f"{speaker} {_FIRST_TO_THIRD[m[1]]}", sent)
    sent = re.sub(_I + r" (\w+)\b(?!')", lambda m: f"{speaker} {_third(m[1])}", sent)
    sent = re.sub(r"(?<![\w'])(me|myself)\b", speaker, sent)
    return re.sub(r"\b(my|mine)\b", f"{speaker}'s", sent).rstrip(".!?") + "."


def offline_summary(dialogue_turns: list[list[str]] | None = None, **_: object) -> str:
    """Summarize without an LLM: each speaker's first-person statements in the third person."""
    lines = [
        third_person(sent, speaker)
        for speaker, text in dialogue_turns or []
        for sent in re.split(r"(?<=[.!?])\s+", text)
        if re.match(r"^(I|I'm|I've|My)\b", sent)
    ]
    return " ".join(lines) if lines else "Nothing specific was said about the speakers."


def _third(verb: str) -> str:
    modal = ("was", "had", "did", "will", "can", "could", "would", "may", "might", "must", "should")
    if verb in modal or verb.endswith("ed"):
        return verb
    if verb.endswith(("s", "sh", "ch", "x", "o")):
        return verb + "es"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _facts_about(summaries: list[str], name: str) -> list[str]:
    """Sentences mentioning ``name``, newest session first (the current stage of each event)."""
    found = []
    for summary in reversed(summaries):
        for sent in re.split(r"(?<=[.!?])\s+", summary.strip()):
            if sent and re.search(rf"\b{re.escape(name)}\b", sent):
                found.append(sent)
    return found


def counterfactual(summaries: list[str], asker: str, asked: str) -> tuple[str, str]:
    """Return (question asked by ``asker`` to ``asked``, correct answer) negating a fact."""
    facts = _facts_about(summaries, asked)
    for fact in facts:
        if _NEGATION.search(fact):  # "B doesn't own a car" -> premise "you own a car"
            affirmed = _NEGATION.sub(lambda m: _AFFIRM.get(m[1], ""), fact, count=1)
            premise = _person(affirmed, asked, asker, second=True)
            truth = _person(fact, asked, asker, second=False)
            return f"So {premise}, right?", f"No, {truth}."
        tokens = re.split(r"(\W+)", fact)
        hit = next((i for i, t in enumerate(tokens) if t.lower() in _SWAPS), None)
        if hit is not None:
            swapped = _SWAPS[tokens[hit].lower()]
            tokens[hit] = swapped.capitalize() if tokens[hit][:1].isupper() else swapped
            premise = _person("".join(tokens), asked, asker, second=True)
            truth = _person(fact, asked, asker, second=False)
            return f"So {premise}, right?", f"No, {truth}."
    if facts:
        premise = _person(facts[0], asked, asker, second=True)
        truth = _person(facts[0], asked, asker, second=False)
        return f"So it is no longer true that {premise}, right?", f"No, it is still true: {truth}."
    raise LookupError(f"no summary sentence mentions {asked!r}: cannot build a counterfactual")


def offline_questions(summary_list: list[str], speaker1: str, speaker2: str, **_: object) -> str:
    """Fig. 27 without an LLM, in the reply format the prompt asks for.

    When the summaries say nothing about a speaker the reply is a note that the parser rejects,
    so the protocol records a generation failure instead of inventing a question.
    """
    try:
        q1, a1 = counterfactual(summary_list, speaker1, speaker2)
        q2, a2 = counterfactual(summary_list, speaker2, speaker1)
    except LookupError as exc:
        return f"(offline generator: {exc})"
    return (
        f"{q1}\n[Answer 1] {speaker2}: {a1}\n\n[Question 2] {speaker2}: {q2}\n"
        f"[Answer 2] {speaker1}: {a2}"
    )


_S6_LINES = (
    "Hey, it's been a while! How have you been?",
    "Pretty good, thanks. Busy as usual. What about you?",
    "Same here. I was just thinking about our last chat.",
    "Oh yeah? The one about {topic}?",
    "Exactly. I still remember what we said about {topic}.",
    "Ha, it feels like that was ages ago.",
    "Time flies. Anything new on your side?",
    "Not much, just trying to keep up with everything.",
    "I know the feeling. By the way, I wanted to ask you something.",
    "Sure, go ahead.",
)


def offline_session6(asker: str, responder: str, question: str, topic: str, **_: object) -> str:
    """Fig. 28 without an LLM: 10 small-talk lines on ``topic``, then the question (11)."""
    speakers = [asker if i % 2 == 0 else responder for i in range(len(_S6_LINES))]
    lines = [f"{s}: {t.format(topic=topic)}" for s, t in zip(speakers, _S6_LINES, strict=True)]
    return "\n".join([*lines, f"{asker}: {question}"])


def _content_stems(text: str) -> set[str]:
    return {stem(w) for w in content(words(text))}


def lexical_verdict(query: str, answer: str, response: str) -> tuple[bool, str]:
    """Return (correct, analysis): does ``response`` side with ``answer`` or the premise?"""
    truth = _content_stems(answer) - _content_stems(query)
    premise = _content_stems(query) - _content_stems(answer)
    said = _content_stems(response)
    wins_true, wins_false = len(said & truth), len(said & premise)
    cue = bool(_CORRECTION & set(words(response)))
    correct = wins_true > wins_false or (wins_true == wins_false and cue)
    why = (
        f"offline lexical check: {wins_true} word(s) of the correct answer not in the question "
        f"{sorted(said & truth)}, {wins_false} of the counterfactual premise {sorted(said & premise)}"
        f", correction cue {'present' if cue else 'absent'}"
    )
    return correct, why


def offline_judge(query: str, answer: str, response: str, **_: object) -> str:
    """Fig. 29 without an LLM, in the reply format the prompt asks for."""
    correct, why = lexical_verdict(query, answer, response)
    return f"[Evaluation] Evaluation: {why}. Result: {'Correct' if correct else 'Incorrect'}"
