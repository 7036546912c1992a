"""Text normalization: the tokenizers, stemmers and stopword lists of recallbench, in one place.

Each variant is named for what it is and who uses it; they differ on purpose, and a change to
one moves the numbers of everything that uses it (run the golden tables, tests/golden/):

Tokenizers
- ``words``: lowercased runs of letters (apostrophes kept inside words). Dialogue heuristics of
  the memory methods (offline summaries, relations, responses).
- ``answer_words``: NFKC, lowercase, possessive 's dropped, numbers kept and number words turned
  into digits ("twenty three" -> "23"). Judging answers against labels (``judges/lexical``) and
  the answer-side heuristics that must agree with it (CAIM tags, TiM, TeaFarm, G-Eval offline).
- ``parlai_tokens``: ParlAI's ``normalize_answer`` then whitespace split. The CareCall metric
  set (token F1, Distinct-n, sentence BLEU), whose definition is ParlAI's.
- ``TOKENIZERS``: ``whitespace`` and ``word`` (runs of word characters) for the dataset
  statistics tables (LUFY Table 1 counts words with ``word``, CareCall with ``whitespace``).
- ``char_ngrams``: the set of character n-grams inside each word (NFC, lowercase, punctuation
  dropped; a word shorter than n is kept whole). Language-neutral overlap for Korean, where
  words carry particles and endings (무릎이 / 무릎 share the bigram 무릎 but no word) and the
  English stemmers/stopwords above do not apply: the offline CareCall memory-operation rule and
  the memory-turn detector of the CareCall response tables.
- ``normalize_sentence``: NFC, whitespace collapsed, stripped: the CareCall sentence match.
- NLTK's ``word_tokenize`` for Mem0's BLEU-1 lives with its only user,
  ``protocols/locomo/_nltk_tokenize.py`` (``nltk_word_tokenize``).

Stemmers (``STEMMERS``)
- ``porter``: NLTK's Porter stemmer (data-free). THEANINE's and Bae et al.'s offline relation rules.
- ``light``: a light English suffix stemmer (-ies/-ing/-ed/-es/-s, then a final -e), numbers
  unchanged. The lexical judge and the answer-side heuristics.
- ``crude``: strip one of -ing/-ies/-ed/-es/-s keeping 3+ letters, then a final -e. The
  LLM-era baselines' offline rules (RSum-LLM, MemoChat, COMEDY).

Stopword lists (``STOPWORDS``)
- ``dialogue``: function words ignored by word-overlap heuristics on dialogue (``content_words``).
- ``answer``: the lexical judge's list (more pronouns and quantifiers), on ``answer_words`` tokens.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from recallbench.errors import did_you_mean

__all__ = [
    "ANSWER_STOPWORDS",
    "DIALOGUE_STOPWORDS",
    "NUMBER_WORDS",
    "STEMMERS",
    "STOPWORDS",
    "TOKENIZERS",
    "answer_content",
    "answer_words",
    "char_ngrams",
    "content_words",
    "crude_stem",
    "is_number",
    "light_stem",
    "normalize_answer",
    "normalize_sentence",
    "parlai_tokens",
    "porter_stem",
    "tokenize",
    "words",
]

# -- dialogue words ---------------------------------------------------------------------------

_WORD = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)*")
# Function words ignored by word-overlap heuristics (offline responses, offline memory ops).
DIALOGUE_STOPWORDS = frozenset(
    """a an the and or but if so as at by for from in into of on onto to with without about
    i me my mine myself you your yours we us our they them their he him his she her it its
    this that these those there here what which who whom whose when where why how
    am is are was were be been being do does did doing have has had having
    can could will would shall should may might must just really very much many some any
    all also too not no yes oh ok okay well then than s t d ll m re ve don doesn didn isn
    wasn aren weren couldn wouldn shouldn won haven hasn hadn""".split()
)


def words(text: str) -> list[str]:
    """Return the lowercased words of ``text`` (letters only; apostrophes kept inside words)."""
    return _WORD.findall(text.lower().replace("\u2019", "'"))


def content_words(text: str) -> list[str]:
    """Return the words of ``text`` that are not in ``DIALOGUE_STOPWORDS``, in order."""
    return [w for w in words(text) if w.split("'")[0] not in DIALOGUE_STOPWORDS]


# -- answer words (judging) -------------------------------------------------------------------

ANSWER_STOPWORDS = frozenset(
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
# English number words below twenty (also the "<n> days ago" of CAIM's date resolution)
NUMBER_WORDS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_SCALES = {"hundred": 100, "thousand": 1000}
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+")
_POSSESSIVE = re.compile(r"(\w)'s\b")


def _number_words(tokens: list[str]) -> list[str]:
    """Replace number words by digit tokens ("twenty three" -> "23", "a hundred" -> "100")."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        w = tokens[i]
        i += 1
        if w in NUMBER_WORDS or w in _TENS:
            value = _TENS.get(w, NUMBER_WORDS.get(w, 0))
            if w in _TENS and i < len(tokens) and 0 < NUMBER_WORDS.get(tokens[i], 0) < 10:
                value += NUMBER_WORDS[tokens[i]]
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


def answer_words(text: str) -> list[str]:
    """Return the normalized word and number tokens of ``text`` (before stemming)."""
    text = unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'").replace("`", "'")
    text = _POSSESSIVE.sub(r"\1", text)
    raw = [t.replace(",", "") for t in _TOKEN.findall(text)]
    return _number_words(raw)


def is_number(token: str) -> bool:
    """Return True for a number token of ``answer_words`` (it starts with a digit)."""
    return token[:1].isdigit()


def answer_content(tokens: list[str]) -> list[str]:
    """Drop stopwords from normalized tokens."""
    return [t for t in tokens if t not in ANSWER_STOPWORDS]


# -- ParlAI normalization (CareCall metrics) -------------------------------------------------

# ParlAI parlai/core/metrics.py (re_art, re_punc), verbatim patterns.
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = re.compile(r"[!\"#$%&()*+,-./:;<=>?@\[\]\\^`{|}~_\']")


def normalize_answer(text: str) -> str:
    """Lowercase, replace punctuation by spaces, drop articles, collapse whitespace (ParlAI)."""
    text = _PUNCT.sub(" ", text.lower())
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def parlai_tokens(text: str) -> list[str]:
    """Return the ParlAI-normalized whitespace tokens of ``text``."""
    return normalize_answer(text).split()


# -- dataset-statistics tokenizers -----------------------------------------------------------

_WORD_CHARS = re.compile(r"\w+")

TOKENIZERS: dict[str, Callable[[str], list[str]]] = {
    "whitespace": lambda text: text.strip().split(),
    "word": lambda text: _WORD_CHARS.findall(text),
}


def tokenize(text: str, tokenizer: str = "whitespace") -> list[str]:
    """Split ``text`` into words with the named tokenizer of ``TOKENIZERS``."""
    if tokenizer not in TOKENIZERS:
        raise did_you_mean("tokenizer", tokenizer, TOKENIZERS)
    return TOKENIZERS[tokenizer](text)


# -- character n-grams (language-neutral overlap) --------------------------------------------

_NON_WORD = re.compile(r"[^\w\s]|_")


def normalize_sentence(text: str) -> str:
    """Return ``text`` NFC-normalized with whitespace collapsed and stripped."""
    return " ".join(unicodedata.normalize("NFC", text).split())


@lru_cache(maxsize=100_000)
def char_ngrams(text: str, n: int = 2) -> frozenset[str]:
    """Return the character n-grams inside the words of ``text`` (lowercased, NFC,
    punctuation dropped); a word shorter than ``n`` characters counts as one gram."""
    if n < 1:
        raise ValueError(f"char_ngrams: n must be >= 1, got {n}")
    grams: set[str] = set()
    for word in _NON_WORD.sub(" ", unicodedata.normalize("NFC", text).lower()).split():
        if len(word) <= n:
            grams.add(word)
        else:
            grams.update(word[i : i + n] for i in range(len(word) - n + 1))
    return frozenset(grams)


# -- stemmers ---------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _porter() -> Any:
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


@lru_cache(maxsize=100_000)
def porter_stem(word: str) -> str:
    """Return NLTK's Porter stem of ``word`` (the data-free part of nltk).

    Memoised: the stem is a pure function of the word and scoring stems the same words again
    and again (LoCoMo's F1 of 1,540 answers: 102,758 stems of a few thousand words).
    """
    return str(_porter().stem(word))  # nltk ships no types


def light_stem(word: str) -> str:
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


@lru_cache(maxsize=100_000)
def content_stems(text: str) -> frozenset[str]:
    """The light stems of ``text``'s content words (``answer_words``, stopwords dropped),
    remembered per text: an offline reader compares every recalled item with each question
    (Full history on LoCoMo: ~400 items x ~200 questions per conversation)."""
    return frozenset(light_stem(w) for w in answer_content(answer_words(text)))


_SUFFIXES = ("ing", "ies", "ed", "es", "s")


def crude_stem(word: str) -> str:
    """Return a crude stem of ``word`` (hiking, hikes, hiked, hike -> hik)."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


STEMMERS: dict[str, Callable[[str], str]] = {
    "porter": porter_stem,
    "light": light_stem,
    "crude": crude_stem,
}

STOPWORDS: dict[str, frozenset[str]] = {"dialogue": DIALOGUE_STOPWORDS, "answer": ANSWER_STOPWORDS}
