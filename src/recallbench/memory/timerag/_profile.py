"""The profile writer: memory records from a user's own documents (TimeRAG on LaMP-1, Table VII).

LaMP-1's history is the user's papers (title, abstract, year), not utterances, so the utterance
templates of ``_writer`` find nothing in it (no "I like ..."). Sec. 5.2 says TimeRAG "retrieves a
small set of structured memory records" built from "the user's past records"; what a paper
tells about its author is a research interest. This writer turns each profile item into
``background.research`` candidates, one per key phrase: the stopword-delimited word runs of
RAKE's candidate step (Rose et al. 2010) over scikit-learn's English stopword list plus a few
title function words (``TITLE_FILLERS``), 1-4 words long, canonicalized like the templates'
values. A title phrase has reliability ``TITLE_RELIABILITY`` (0.6, above tau = 0.55: the user
wrote it); an abstract phrase ``ABSTRACT_RELIABILITY`` (0.45, below tau): it is written only
once repeated (the gate's repetition bonus), so a topic the user returns to in several papers
gets in and one passing mention does not. The record's timestamp is its write time (Table II),
the profile session's, not the paper's year: a year-old paper weighs exp(-0.25 * 365) ~ 0 in
days, which would erase every profile.

This is the project's reading; the paper prints no LaMP-1 writer.
"""

from __future__ import annotations

import re

from recallbench.memory.timerag._writer import Candidate, canonical
from recallbench.records import Turn

SLOT = "background.research"
TITLE_RELIABILITY = 0.6
ABSTRACT_RELIABILITY = 0.45
MAX_WORDS = 4
# Words of paper titles that frame a topic without naming it ("Towards X via Y").
TITLE_FILLERS = frozenset(
    "towards toward via using based study approach approaches novel revisiting new method "
    "methods framework paper analysis".split()
)
_TOKEN = re.compile(r"[a-z0-9][a-z0-9'+-]*|[^\sa-z0-9]")


def _stopwords() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS) | TITLE_FILLERS


def key_phrases(text: str) -> list[str]:
    """RAKE's candidate phrases of ``text``: maximal runs of non-stopwords (1-4 words)."""
    stop = _stopwords()
    phrases: list[str] = []
    run: list[str] = []
    for token in [*_TOKEN.findall(text.lower()), "."]:
        if token in stop or not token[0].isalnum():
            if 0 < len(run) <= MAX_WORDS:
                phrase = canonical(" ".join(run))
                if phrase and not phrase.isdigit() and phrase not in phrases:
                    phrases.append(phrase)
            run = []
        else:
            run.append(token)
    return phrases


def profile_candidates(turn: Turn) -> list[Candidate]:
    """Candidates of one profile item: its title's key phrases, then its abstract's."""
    title, _, abstract = turn.text.partition("\n")
    found: dict[str, Candidate] = {}
    for phrase in key_phrases(title):
        found[phrase] = Candidate(SLOT, phrase, "+", TITLE_RELIABILITY, "profile_title")
    for phrase in key_phrases(abstract):
        found.setdefault(phrase, Candidate(SLOT, phrase, "+", ABSTRACT_RELIABILITY, "abstract"))
    return list(found.values())
