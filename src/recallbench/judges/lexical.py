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

from recallbench.judges.base import CORRECT, DONT_KNOW, INCORRECT, Judge, Verdict

STOPWORDS = frozenset(
    """a an the and or but if so as at by for from in into of on onto to with without about
    over under up down out off again than then too very just also only even still yet
    i me my mine myself you your yours yourself we us our ours they them their theirs
    he him his she her hers it its itself this that these those there here
    what which who whom whose when where why how whats
    am is are was were be been being do does did doing done have has had having
    can could will would shall should may might must
    not no nor yes oh ok okay well really much many some any all each both own same other such
    s t d ll m re ve don doesn didn isn wasn aren weren won haven hasn hadn couldn wouldn""".split()
)
_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19,
}  # fmt: skip
_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}  # fmt: skip
_SCALES = {"hundred": 100, "thousand": 1000}
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+")
_POSSESSIVE = re.compile(r"(\w)'s\b")
# An answer that opens with one of these (after fillers such as "Sorry,") is a don't-know.
DONT_KNOW_PHRASES = (
    "i don't know", "i do not know", "i dont know", "i'm not sure", "i am not sure", "not sure",
    "i don't remember", "i do not remember", "i can't remember", "i cannot remember",
    "i don't recall", "i do not recall", "i can't recall", "i cannot recall", "no idea",
    "i have no idea", "i have no information", "i don't have any information",
    "i do not have any information", "i don't have information", "i don't have that information",
    "no information", "there is no information", "there's no information", "unknown", "n/a",
    "no memory", "no relevant memory", "the memory does not", "my memory does not",
    "nothing in my memory", "i couldn't find", "i could not find",
)  # fmt: skip
_FILLER = re.compile(r"^(?:(?:sorry|hmm+|well|unfortunately|honestly|oh)\b[\s,.!:;-]*)+")


def _number_words(tokens: list[str]) -> list[str]:
    """Replace number words by digit tokens ("twenty three" -> "23", "a hundred" -> "100")."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        w = tokens[i]
        i += 1
        if w in _UNITS or w in _TENS:
            value = _TENS.get(w, _UNITS.get(w, 0))
            if w in _TENS and i < len(tokens) and 0 < _UNITS.get(tokens[i], 0) < 10:
                value += _UNITS[tokens[i]]
                i += 1
            if i < len(tokens) and tokens[i] in _SCALES:
                value *= _SCALES[tokens[i]]
                i += 1
            out.append(str(value))
        elif w in _SCALES and out and out[-1] == "a":
            out[-1] = str(_SCALES[w])
        else:
            out.append(w)
    return out


def words(text: str) -> list[str]:
    """Return the normalized word and number tokens of ``text`` (before stemming)."""
    text = unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'").replace("`", "'")
    text = _POSSESSIVE.sub(r"\1", text)
    raw = [t.replace(",", "") for t in _TOKEN.findall(text)]
    return _number_words(raw)


def stem(word: str) -> str:
    """Strip common English suffixes (a light stemmer; numbers are returned unchanged)."""
    if word[:1].isdigit():
        return word
    w = word
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
        if len(w) > 2 and w[-1] == w[-2] and w[-1] not in "aeiouls":
            w = w[:-1]
    elif len(w) > 4 and w.endswith("ed"):
        w = w[:-2]
        if len(w) > 2 and w[-1] == w[-2] and w[-1] not in "aeiouls":
            w = w[:-1]
    elif len(w) > 4 and w.endswith(("ses", "xes", "zes", "ches", "shes")):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


def is_number(token: str) -> bool:
    return token[:1].isdigit()


def content(tokens: list[str]) -> list[str]:
    """Drop stopwords from normalized tokens."""
    return [t for t in tokens if t not in STOPWORDS]


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
        info = {
            "key": list(m.key),
            "matched": list(m.matched),
            "coverage": round(m.coverage, 4),
            "numbers_missing": list(m.numbers_missing),
        }
        return Verdict(label=label, raw=str(label), info=info)

    def describe(self) -> dict:
        return {"name": self.name, "threshold": self.threshold, "fuzzy": self.fuzzy}
