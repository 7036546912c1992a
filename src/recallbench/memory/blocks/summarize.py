"""Per-session memory summarization of the classic baselines (THEANINE App. I; Bae et al. 2022).

The summarization PromptTask (stage ``memory``), the parser of its reply (one memory sentence a
line) and its extractive offline twin (a speaker's self-disclosing sentences).
"""

from __future__ import annotations

import re
from functools import partial

from recallbench.llm.task import ParseError, PromptTask
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
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


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
        for sentence in SENTENCE_END.split(text):
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
) -> PromptTask[tuple[str, ...]]:
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
