"""Dataset statistics on Episode records: LUFY Table 1 and CareCall_mem Table 1.

Only :class:`~recallbench.records.Episode` records are read, so every loaded dataset works.

Definitions (and why):
- A *conversation* is one Episode. For LUFY that is one user's four sessions with one system,
  the unit of LUFY Table 1 (51 = 17 users x 3 systems).
- A *turn* is one utterance (one Turn record). LUFY's 253.8 turns per conversation is
  12,940 utterances / 51 conversations (user and bot rows both count).
- *Words* depend on a tokenizer, named in every result:
  ``whitespace`` = ``text.strip().split()`` (for Korean this is the eojeol, the space-delimited
  unit; punctuation stays attached); ``word`` = maximal runs of Unicode word characters
  (regex ``\\w+``: punctuation dropped, "I'm" counts as two words). On the real LUFY data
  ``word`` comes closest to the paper's 5,538.5 words per conversation (see the report).
- Distinct-n = number of distinct n-grams / total number of words (CareCall Table 1 caption,
  after Li et al. 2016). N-grams never cross an utterance or sentence boundary.

Every ratio is total: an empty denominator gives 0.0, never NaN.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from recallbench.errors import DatasetFormatError
from recallbench.records import Episode, Session
from recallbench.text import tokenize

__all__ = [
    "TOKENIZER_NOTES",
    "CareCallStats",
    "ConversationStats",
    "carecall_stats",
    "conversation_stats",
    "distinct_n",
]


# What a "word" is under each tokenizer (``recallbench.text.tokenize``), for table headers.
TOKENIZER_NOTES = {
    "word": "runs of Unicode word characters (regex \\w+; punctuation dropped, I'm = 2 words)",
    "whitespace": "whitespace split after stripping (Korean: eojeol; punctuation attached)",
}


def _ratio(num: float, den: float) -> float:
    return float(num) / den if den else 0.0


def _ngrams(tokens: Sequence[str], n: int) -> Iterable[tuple[str, ...]]:
    return (tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def _distinct_counts(units: Iterable[Sequence[str]]) -> tuple[int, int, int]:
    """Return (total words, distinct unigrams, distinct bigrams) over tokenized units."""
    words = 0
    uni: set[tuple[str, ...]] = set()
    bi: set[tuple[str, ...]] = set()
    for tokens in units:
        words += len(tokens)
        uni.update(_ngrams(tokens, 1))
        bi.update(_ngrams(tokens, 2))
    return words, len(uni), len(bi)


def distinct_n(units: Iterable[Sequence[str]], n: int) -> float:
    """Distinct-n: distinct n-grams (within each unit) divided by the total number of words."""
    words = 0
    grams: set[tuple[str, ...]] = set()
    for tokens in units:
        words += len(tokens)
        grams.update(_ngrams(tokens, n))
    return _ratio(len(grams), words)


@dataclass(frozen=True)
class ConversationStats:
    """Counts behind LUFY Table 1 (one Episode = one conversation)."""

    dataset: str
    tokenizer: str
    conversations: int
    sessions: int
    turns: int
    words: int

    @property
    def avg_turns(self) -> float:
        return _ratio(self.turns, self.conversations)

    @property
    def avg_words(self) -> float:
        return _ratio(self.words, self.conversations)

    @property
    def avg_turns_per_session(self) -> float:
        return _ratio(self.turns, self.sessions)

    @property
    def avg_words_per_turn(self) -> float:
        return _ratio(self.words, self.turns)

    def to_dict(self) -> dict[str, float | int | str]:
        """Return the counts and the derived averages as a plain dict."""
        derived = ("avg_turns", "avg_words", "avg_turns_per_session", "avg_words_per_turn")
        return asdict(self) | {name: getattr(self, name) for name in derived}


def conversation_stats(
    episodes: Sequence[Episode], tokenizer: str = "word", dataset: str | None = None
) -> ConversationStats:
    """Count conversations, sessions, turns and words; ``dataset`` defaults to the episodes'."""
    names = sorted({e.dataset for e in episodes})
    turns = [t for e in episodes for t in e.turns()]
    return ConversationStats(
        dataset=dataset if dataset is not None else ",".join(names),
        tokenizer=tokenizer,
        conversations=len(episodes),
        sessions=sum(len(e.sessions) for e in episodes),
        turns=len(turns),
        words=sum(len(tokenize(t.text, tokenizer)) for t in turns),
    )


@dataclass(frozen=True)
class CareCallStats:
    """Counts behind CareCall_mem Table 1 for one group of sessions."""

    group: str
    tokenizer: str
    sessions: int
    turns: int
    words: int
    unique_words: int
    distinct_bigrams: int
    memory_sentences: int
    summary_sentences: int
    summary_words: int
    summary_unique_words: int
    summary_distinct_bigrams: int

    @property
    def avg_turns_per_session(self) -> float:
        return _ratio(self.turns, self.sessions)

    @property
    def avg_words_per_turn(self) -> float:
        return _ratio(self.words, self.turns)

    @property
    def distinct1(self) -> float:
        return _ratio(self.unique_words, self.words)

    @property
    def distinct2(self) -> float:
        return _ratio(self.distinct_bigrams, self.words)

    @property
    def avg_memory_sentences(self) -> float:
        return _ratio(self.memory_sentences, self.sessions)

    @property
    def avg_summary_sentences(self) -> float:
        return _ratio(self.summary_sentences, self.sessions)

    @property
    def avg_words_per_summary_sentence(self) -> float:
        return _ratio(self.summary_words, self.summary_sentences)

    @property
    def summary_distinct1(self) -> float:
        return _ratio(self.summary_unique_words, self.summary_words)

    @property
    def summary_distinct2(self) -> float:
        return _ratio(self.summary_distinct_bigrams, self.summary_words)

    def to_dict(self) -> dict[str, float | int | str]:
        """Return the counts and the derived ratios as a plain dict."""
        derived = [n for n, v in vars(type(self)).items() if isinstance(v, property)]
        return asdict(self) | {name: getattr(self, name) for name in derived}


def _sentences(episode: Episode, session: Session, key: str) -> list[str]:
    """Return the non-blank sentences of ``session.gold[key]`` (missing key = none)."""
    value = session.gold.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(s, str) for s in value):
        raise DatasetFormatError(
            f"episode {episode.episode_id!r} session {session.session_id!r}: gold[{key!r}] "
            f"must be a list of sentences, got {type(value).__name__}"
        )
    return [s for s in value if s.strip()]


def _carecall_group(
    group: str, pairs: Sequence[tuple[Episode, Session]], tokenizer: str
) -> CareCallStats:
    turns = [tokenize(t.text, tokenizer) for _, s in pairs for t in s.turns]
    memory = [m for e, s in pairs for m in _sentences(e, s, "memory")]
    summary = [tokenize(x, tokenizer) for e, s in pairs for x in _sentences(e, s, "summary")]
    words, uni, bi = _distinct_counts(turns)
    s_words, s_uni, s_bi = _distinct_counts(summary)
    return CareCallStats(
        group=group,
        tokenizer=tokenizer,
        sessions=len(pairs),
        turns=len(turns),
        words=words,
        unique_words=uni,
        distinct_bigrams=bi,
        memory_sentences=len(memory),
        summary_sentences=len(summary),
        summary_words=s_words,
        summary_unique_words=s_uni,
        summary_distinct_bigrams=s_bi,
    )


def carecall_stats(
    episodes: Sequence[Episode], tokenizer: str = "whitespace"
) -> dict[str, CareCallStats]:
    """Compute CareCall Table 1 statistics for all sessions and per session index.

    Keys: ``"all"`` then ``"session_<k>"`` for each session index present, ascending.
    Memory sentences come from ``session.gold["memory"]`` (memory before the session) and
    summary sentences from ``session.gold["summary"]``; blank sentences are not counted.
    """
    pairs = [(e, s) for e in episodes for s in e.sessions]
    result = {"all": _carecall_group("all", pairs, tokenizer)}
    for index in sorted({s.index for _, s in pairs}):
        group = f"session_{index}"
        subset = [(e, s) for e, s in pairs if s.index == index]
        result[group] = _carecall_group(group, subset, tokenizer)
    return result
