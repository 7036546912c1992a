"""Judge ``lexical``: an offline stand-in for the LLM judge of LUFY App. C.1 (no model at all).

It labels an answer against the label answer with the C.1 label set: 1 correct, 0 incorrect,
2 "I don't know". The rule, in order:

1. Normalize both texts: NFKC, lowercase, curly quotes straightened, possessive ``'s`` dropped,
   number words -> digits ("twenty three" -> 23, "a hundred" -> 100), thousands separators
   dropped ("1,000" -> 1000); tokens are runs of letters or numbers; a light suffix stemmer
   (-ies/-ing/-ed/-es/-s, then a final -e) so "riding" and "ride" meet.
2. Key tokens of the label answer: its content words (stopwords removed) that do not occur in
   the question (a label that restates the question, "Alexander's hobby is X", is judged on X).
   If nothing is left, the label's content words; if still nothing ("Yes."), all its words.
3. Correct (1) when the label's numbers all occur in the answer and at least ``threshold``
   (default 0.5) of the key tokens are matched. A key token matches an answer token when the
   stems are equal, when two adjacent tokens on either side join into it ("motor cycles" =
   "motorcycles"), or, for tokens of 5+ letters, when their difflib similarity ratio is at
   least ``fuzzy`` (default 0.8; users' typos such as "Sappolo" for "Sapporo").
   C.1 says "Output 1 even if the answer is only partly correct": hence a fraction, not all.
4. Otherwise don't-know (2) when the answer is empty, has no content word (yes/no count), or
   opens with a don't-know phrase ("I don't know", "No information found", "I'm not sure",
   "Sorry, I don't remember" ...); else incorrect (0).

Deviation from C.1: the rule "Output 0 if the answer uses 'I' as the subject" is not applied.
It guards against LLM answers that speak as the user; the offline (extractive) answer quotes a
recalled utterance, which is naturally in the user's first person.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass

from recallbench.judges.base import CORRECT, DONT_KNOW, INCORRECT, Description, Judge, Verdict
from recallbench.text import answer_content as content
from recallbench.text import answer_words as words
from recallbench.text import is_number
from recallbench.text import light_stem as stem
from recallbench.verdict import JSONValue

# An answer that opens with one of these (after fillers such as "Sorry,") is a don't-know.
DONT_KNOW_PHRASES = (
    "i don't know",
    "i do not know",
    "i dont know",
    "i'm not sure",
    "i am not sure",
    "not sure",
    "i don't remember",
    "i do not remember",
    "i can't remember",
    "i cannot remember",
    "i don't recall",
    "i do not recall",
    "i can't recall",
    "i cannot recall",
    "no idea",
    "i have no idea",
    "i have no information",
    "i don't have any information",
    "i do not have any information",
    "i don't have information",
    "i don't have that information",
    "no information",
    "there is no information",
    "there's no information",
    "unknown",
    "n/a",
    "no memory",
    "no relevant memory",
    "the memory does not",
    "my memory does not",
    "nothing in my memory",
    "i couldn't find",
    "i could not find",
)
_FILLER = re.compile(r"^(?:(?:sorry|hmm+|well|unfortunately|honestly|oh)\b[\s,.!:;-]*)+")


def is_dont_know(answer: str) -> bool:
    """Return True when ``answer`` is empty, has no content word, or opens with a don't-know phrase."""
    tokens = words(answer)
    if not content(tokens) and not {"yes", "no"} & set(tokens):
        return True
    norm = unicodedata.normalize("NFKC", answer).lower().replace("\u2019", "'")
    norm = _FILLER.sub("", " ".join(norm.split()).lstrip("\"'*( "))
    return norm.startswith(DONT_KNOW_PHRASES)


@dataclass(frozen=True)
class Match:
    """How much of the label answer an answer covers."""

    key: tuple[str, ...]
    matched: tuple[str, ...]
    numbers_missing: tuple[str, ...]

    @property
    def coverage(self) -> float:
        return len(self.matched) / len(self.key) if self.key else 0.0


def _similar(a: str, b: str, fuzzy: float) -> bool:
    if a == b:
        return True
    if is_number(a) or is_number(b) or min(len(a), len(b)) < 5 or fuzzy >= 1:
        return False
    return difflib.SequenceMatcher(None, a, b).ratio() >= fuzzy


def match(question: str, label: str, answer: str, fuzzy: float = 0.8) -> Match:
    """Return the key tokens of ``label`` and those found in ``answer`` (see module rule)."""
    label_words = words(label)
    asked = {stem(w) for w in words(question)}
    key_words = [w for w in content(label_words) if stem(w) not in asked]
    key_words = key_words or content(label_words) or label_words
    ans_words = words(answer)
    ans_stems = {stem(w) for w in ans_words}
    ans_stems |= {stem(a + b) for a, b in zip(ans_words, ans_words[1:], strict=False)}
    matched: list[str] = []
    for i, w in enumerate(key_words):
        s = stem(w)
        joined = stem(w + key_words[i + 1]) if i + 1 < len(key_words) else None
        prev = stem(key_words[i - 1] + w) if i > 0 else None
        if (
            any(_similar(s, a, fuzzy) for a in ans_stems)
            or joined in ans_stems
            or (prev in ans_stems)
        ):
            matched.append(w)
    numbers = {w for w in label_words if is_number(w)}
    missing = tuple(sorted(numbers - set(ans_words)))
    key = tuple(dict.fromkeys(key_words))
    return Match(key, tuple(dict.fromkeys(matched)), missing)


class LexicalJudge(Judge):
    """Label answers by normalized word matching against the label answer (no LLM).

    Args:
        threshold: minimum fraction of the label's key tokens the answer must contain.
        fuzzy: difflib ratio at which two tokens of 5+ letters count as the same word
            (1.0 disables fuzzy matching).
    """

    name = "lexical"

    def __init__(self, threshold: float = 0.5, fuzzy: float = 0.8) -> None:
        if not 0 < threshold <= 1:
            raise ValueError(f"lexical judge: threshold must be in (0, 1], got {threshold}")
        if not 0 < fuzzy <= 1:
            raise ValueError(f"lexical judge: fuzzy must be in (0, 1], got {fuzzy}")
        self.threshold = threshold
        self.fuzzy = fuzzy

    def label(self, question: str, label_answer: str, answer: str) -> tuple[int, Match]:
        """Return the C.1 label (1/0/2) of ``answer`` and the match it was decided on."""
        m = match(question, label_answer, answer, self.fuzzy)
        if m.key and not m.numbers_missing and m.coverage >= self.threshold:
            return CORRECT, m
        if is_dont_know(answer):
            return DONT_KNOW, m
        return INCORRECT, m

    def judge(self, question: str, label_answer: str, answer: str) -> Verdict:
        label, m = self.label(question, label_answer, answer)
        info: dict[str, JSONValue] = {
            "key": list(m.key),
            "matched": list(m.matched),
            "coverage": round(m.coverage, 4),
            "numbers_missing": list(m.numbers_missing),
        }
        return Verdict(label=label, raw=str(label), info=info, judge=self.name)

    def describe(self) -> Description:
        return {"name": self.name, "threshold": self.threshold, "fuzzy": self.fuzzy}
