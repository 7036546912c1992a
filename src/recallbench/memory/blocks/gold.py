"""Memory sentences from a session's gold annotations, and the turns a sentence came from.

``gold_sentences`` reads a session's gold summaries or personas (``source: gold`` of the
session-summary baselines); ``attribute`` maps a memory sentence (gold or summarized) to the
turns it was taken from, its provenance.
"""

from __future__ import annotations

from typing import Any

from recallbench.errors import DatasetFormatError
from recallbench.memory.blocks.summarize import SENTENCE_END
from recallbench.records import Session
from recallbench.text import words


def _normalized(text: str) -> str:
    return " ".join(words(text))


def attribute(sentence: str, session: Session) -> tuple[str, ...]:
    """Return the ids of the turns ``sentence`` came from, else every turn id of ``session``.

    A turn is the source when a label value equals the sentence (e.g. MSC ``persona_text``) or
    its text contains the sentence body (extractive summaries); abstractive sentences map to
    the whole session.
    """
    body = sentence.partition(": ")[2] if ": " in sentence[:40] else sentence
    target = _normalized(body)
    long_enough = len(target.split()) >= 3  # shorter bodies are substrings of turns by accident
    hits = tuple(
        t.turn_id
        for t in session.turns
        if target
        and (
            any(isinstance(v, str) and _normalized(v) == target for v in t.labels.values())
            or (long_enough and f" {target} " in f" {_normalized(t.text)} ")
        )
    )
    if hits:
        return hits
    return tuple(t.turn_id for t in session.turns)


GOLD_SUMMARY_KEYS = ("summary", "persona_session", "persona")


def gold_sentences(session: Session, key: str) -> list[tuple[str, str]]:
    """Return ``(text, kind)`` memory sentences of THIS session from its gold annotations.

    ``key``: ``summary`` (list of str, e.g. CareCall; a CC paragraph is split into sentences),
    ``persona_session`` (MSC: {speaker: [facts]} revealed in this session), ``persona``
    ({speaker: [facts]}; for MSC the running summary AFTER the session, so it repeats earlier
    facts) or ``auto`` (the first of those present). Facts get a ``speaker: `` prefix.
    """
    gold = session.gold
    if key == "auto":
        key = next((k for k in GOLD_SUMMARY_KEYS if k in gold), GOLD_SUMMARY_KEYS[0])
    where = f"session {session.session_id}: gold {key!r}"
    if key not in gold:
        raise DatasetFormatError(
            f"{where} missing (gold keys: {sorted(gold)}); source=gold needs per-session "
            f"summaries or personas ({', '.join(GOLD_SUMMARY_KEYS)})"
        )
    value: Any = gold[key]
    if key == "summary":
        value = [value] if isinstance(value, str) else value
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise DatasetFormatError(f"{where} must be a list of str, got {value!r:.80}")
        split = (part.strip() for text in value for part in SENTENCE_END.split(text.strip()))
        return [(part, "summary") for part in split if part]
    if not isinstance(value, dict) or not all(isinstance(v, list) for v in value.values()):
        raise DatasetFormatError(f"{where} must be {{speaker: [facts]}}, got {value!r:.80}")
    return [
        (f"{spk}: {fact.strip()}", "fact")
        for spk, facts in value.items()
        for fact in facts
        if isinstance(fact, str) and fact.strip()
    ]
