"""Shared pieces of the classic memory baselines (THEANINE sec. 3.2; Bae et al., 2022 sec. 5.2).

- the response prompts (``prompt_style``), defined in ``memory._prompts``;
- the per-session memory summarization PromptTask (stage ``memory``) and its extractive offline
  twin, plus gold summaries/personas read from ``Session.gold``;
- ``BaselineMethod``: episode bookkeeping (observed turn ids, reset) and ``prompt`` for all of them;
- top-k retrieval of memory items by cosine similarity with the recent dialogue context.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any

from recallbench.embed.base import TextEmbedder
from recallbench.embed.index import topk
from recallbench.errors import DatasetFormatError
from recallbench.llm.task import ParseError, PromptTask
from recallbench.llm.types import LLMClient
from recallbench.memory._base import MemoryMethod, Message, query_text  # noqa: F401 (re-export)
from recallbench.memory._prompts import (  # noqa: F401 (re-exported: the baselines import them here)
    CARECALL_RESPONSE_PROMPT,
    CARECALL_RESPONSE_SOURCE,
    NO_MEMORY,
    PROMPT_STYLES,
    THEANINE_RESPONSE_PROMPT,
    THEANINE_RESPONSE_SOURCE,
    TIMERAG_SYSTEM,
    TIMERAG_USER,
    PromptStyle,
    check_prompt_style,
    response_messages,
)
from recallbench.records import Episode, MemoryItem, Query, Session
from recallbench.text import words

# Ours. THEANINE App. I: "At the end of each session, we use ChatGPT (gpt-3.5-turbo-0125) to
# summarize the conversation into memory sentences" -- the paper prints no prompt for it (App. H
# lists none; its code reads prompts/dialogue-summarization.txt, not available here).
SUMMARY_PROMPT = (
    "Summarize the following dialogue session into memory sentences: short, self-contained "
    "sentences stating what {about} revealed about themselves (facts, events, plans, "
    "preferences, feelings) that is worth remembering in future conversations. Start each "
    "sentence with the name of the speaker it is about. Write one sentence per line and nothing "
    "else.\n\nDialogue session:\n{dialogue}\n\nMemory sentences:"
)
SUMMARY_SOURCE = "ours, after THEANINE App. I 'Memory summarization' (no prompt printed)"

FIRST_PERSON = frozenset({"i", "i'm", "i've", "i'd", "i'll", "my", "me", "mine", "myself"})
_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def render_flat(items: list[MemoryItem] | tuple[MemoryItem, ...]) -> str:
    """Render memory items one per line, in the given order."""
    return "\n".join(item.text for item in items)


# --- per-session summarization -----------------------------------------------------------


def parse_sentences(reply: str) -> tuple[str, ...]:
    """Parse a summarizer reply: one memory sentence (>= 2 words) per line, bullets dropped."""
    lines = (_BULLET.sub("", line).strip() for line in reply.splitlines())
    # headers ("Memory sentences:") and fragments such as a bare speaker name are not memories
    out = tuple(line for line in lines if len(words(line)) >= 2 and not line.endswith(":"))
    if not out:
        raise ParseError(f"no memory sentence in reply {reply[:80]!r}")
    return out


def _dialogue_lines(dialogue: str) -> list[tuple[str, str]]:
    pairs = []
    for line in dialogue.splitlines():
        speaker, sep, text = line.partition(": ")
        if sep and text.strip():
            pairs.append((speaker.strip(), text.strip()))
    return pairs


def extractive_summary(
    *,
    dialogue: str,
    about: str = "",
    speakers: tuple[str, ...] | None = None,
    max_sentences: int = 8,
    min_words: int = 4,
) -> str:
    """Offline summarizer: a speaker's self-disclosing sentences, as ``speaker: sentence`` lines.

    A sentence qualifies when it is not a question, has at least ``min_words`` words and
    contains a first-person word (I, I'm, my, me, ...). Over ``max_sentences``, the ones with
    the most words are kept (dialogue order is preserved). When nothing qualifies (e.g. a
    language without those pronouns), the longest non-question sentence stands in, so a
    non-empty session always yields one memory. ``about`` is the rendered prompt field; the
    speaker filter is ``speakers`` (``None``: everyone).
    """
    found: list[tuple[int, str, str]] = []
    fallback: list[tuple[int, str, str]] = []
    for speaker, text in _dialogue_lines(dialogue):
        if speakers is not None and speaker not in speakers:
            continue
        for sentence in _SENTENCE_END.split(text):
            sentence = sentence.strip()
            ws = words(sentence)
            if not ws or sentence.endswith("?"):
                continue
            fallback.append((len(ws), speaker, sentence))
            if len(ws) >= min_words and FIRST_PERSON.intersection(ws):
                found.append((len(ws), speaker, sentence))
    if not found and fallback:
        found = [max(fallback, key=lambda f: f[0])]
    if len(found) > max_sentences:
        ranked = sorted(range(len(found)), key=lambda i: (-found[i][0], i))[:max_sentences]
        found = [found[i] for i in sorted(ranked)]
    return "\n".join(f"{speaker}: {sentence}" for _, speaker, sentence in found)


def summary_task(
    speakers: tuple[str, ...] | None = None, max_sentences: int = 8, min_words: int = 4
) -> PromptTask:
    """Return the per-session summarization task; its offline twin is ``extractive_summary``.

    Unparseable replies fall back to no memory for that session (counted as a parse failure).
    """
    offline = partial(
        extractive_summary, speakers=speakers, max_sentences=max_sentences, min_words=min_words
    )
    return PromptTask(
        name="memory.summarize_session",
        template=SUMMARY_PROMPT,
        parse=parse_sentences,
        offline=offline,
        fallback=(),
        stage="memory",
        max_tokens=256,
        source=SUMMARY_SOURCE,
    )


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
        split = (part.strip() for text in value for part in _SENTENCE_END.split(text.strip()))
        return [(part, "summary") for part in split if part]
    if not isinstance(value, dict) or not all(isinstance(v, list) for v in value.values()):
        raise DatasetFormatError(f"{where} must be {{speaker: [facts]}}, got {value!r:.80}")
    return [
        (f"{spk}: {fact.strip()}", "fact")
        for spk, facts in value.items()
        for fact in facts
        if isinstance(fact, str) and fact.strip()
    ]


# --- retrieval ---------------------------------------------------------------------------


def top_k(
    embedder: TextEmbedder, items: list[MemoryItem], text: str, k: int | None
) -> tuple[list[MemoryItem], list[float]]:
    """Return the ``k`` items most cosine-similar to ``text`` (all when ``k`` is None), best first.

    Ties go to the earlier item in the store (``embed.topk``), so results are deterministic.
    """
    if not items:
        return [], []
    matrix = embedder.encode([item.text for item in items])
    query = embedder.encode([text])[0]
    order, scores = topk(query, matrix, len(items) if k is None else k)
    return [items[int(i)] for i in order], [round(float(s), 6) for s in scores]


# --- base class --------------------------------------------------------------------------


class BaselineMethod(MemoryMethod):
    """Common state of the classic baselines: collaborators, prompt style, observed turns.

    Subclasses implement ``_clear`` (drop their store), ``_write`` (take in a finished session),
    ``recall`` and ``snapshot``. ``memory_label`` names the memory block in the CareCall prompt.
    """

    memory_label = "Memory"

    def __init__(
        self, llm: LLMClient, embedder: TextEmbedder, *, prompt_style: PromptStyle = "theanine"
    ) -> None:
        self.llm = llm
        self.embedder = embedder
        self.prompt_style = check_prompt_style(prompt_style)
        self.episode_id: str | None = None
        self.speakers: tuple[str, ...] = ()
        self._observed: dict[int, tuple[str, ...]] = {}

    def reset(self, episode: Episode) -> None:
        """Start ``episode`` with an empty store."""
        super().reset(episode)
        self._observed = {}
        self._clear()

    def observe(self, session: Session) -> None:
        """Record the session's turn ids (provenance) and write it to memory."""
        self.check_episode(None)
        self._observed[session.index] = tuple(t.turn_id for t in session.turns)
        self._write(session)

    def prompt(self, query: Query, recall: Any) -> list[Message]:
        """Return the response prompt of ``prompt_style`` filled with ``recall.text``."""
        return response_messages(self.prompt_style, recall.text, query, self.memory_label)

    def observed_ids(self, before: int | None = None) -> tuple[str, ...]:
        """Return the turn ids of observed sessions (only those with index < ``before``)."""
        return tuple(
            tid
            for index in sorted(self._observed)
            if before is None or index < before
            for tid in self._observed[index]
        )

    def _clear(self) -> None:
        """Drop the store (called by ``reset``)."""

    def _write(self, session: Session) -> None:
        """Take in a finished session."""
