"""CAIM Post-Thinking tasks (sec. 3.3.3): key events, inductive thoughts, memory review.

Also the shared offline "thought" rules used by TiM (``memory/tim/``): a key event is a
first-person (or recommending) sentence of a turn; a thought is that sentence compressed
(greetings and fillers dropped) and rewritten in the third person with the speakers' names.
"""

from __future__ import annotations

import json
import re
from functools import partial

from recallbench.llm.shapes import Pattern
from recallbench.llm.task import ParseError, PromptTask
from recallbench.memory.blocks.summarize import extractive_summary
from recallbench.memory.caim._controller import FIRST_PERSON
from recallbench.memory.caim._ontology import Ontology
from recallbench.memory.caim._shapes import ThoughtEntry, index_pattern
from recallbench.memory.caim._tasks import (
    FILLERS,
    ISO_DATE,
    KEY_EVENTS_PROMPT,
    RECOMMEND,
    REVIEW_PROMPT,
    SOURCE_A,
    SOURCE_OURS,
    STM_SUMMARY_PROMPT,
    THOUGHT_PROMPT,
    parse_tags,
    tags_pattern,
)
from recallbench.text import words

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_INTERJECTION = re.compile(
    r"^(?:(?:oh|wow|well|hi|hello|hey|yes|yeah|ok|okay|sure|great|thanks|thank you|haha|hmm|"
    r"ah|absolutely|indeed|congrats|congratulations)\b[^\w]*)+",
    re.I,
)
_KEY_EVENT = re.compile(r"\s*,?\s*([^;]+?)\s*;\s*(\d{4}-\d{2}-\d{2})[^,;]*")
_PERSON = {
    "i": "{me}",
    "me": "{me}",
    "myself": "{me}",
    "my": "{me}'s",
    "mine": "{me}'s",
    "i'm": "{me} is",
    "i've": "{me} has",
    "i'll": "{me} will",
    "i'd": "{me} would",
    "you": "{you}",
    "your": "{you}'s",
    "yours": "{you}'s",
    "yourself": "{you}",
    "you're": "{you} is",
    "you've": "{you} has",
    "you'll": "{you} will",
}
_AFTER_I = {"am": "is", "have": "has", "do": "does", "don't": "doesn't", "was": "was"}
# Common present-tense verbs after "I" that get the third-person -s ("I love" -> "Mara loves").
_PRESENT = frozenset(
    """love like enjoy want need hate prefer think feel work live play plan hope know believe
    miss wish own practice read watch cook bake run swim write paint study teach collect go
    repair recommend suggest fix visit""".split()
)
# Reply shapes (structured outputs), each the layout its parser reads, lengths bounded so that a
# reply ends within ``max_tokens``.
_ISO = r"\d{4}-\d{2}-\d{2}"
_PIECE = rf"[^;,\n]{{3,120}};{_ISO}"
KEY_EVENTS_REPLY = Pattern(rf"NONE|{_PIECE}(,{_PIECE}){{0,7}}")


def review_reply(n: int) -> Pattern:
    """Up to ``min(n, 10)`` lines ``[ids] tags | thought | date``, each id one of the ``n``
    memories (the parser also wants every id used once, which a grammar cannot say)."""
    most, one = min(max(n, 1), 10), index_pattern(max(n, 1))
    ids = rf"\[{one}(,{one}){{0,{most - 1}}}\]"
    line = rf"{ids} {tags_pattern(frozenset())} \| [^|\n]{{3,200}} \| {_ISO}"
    return Pattern(rf"{line}(\n{line}){{0,{most - 1}}}")


_TOKEN = re.compile(r"[\w'\u2019]+|[^\w\s]")


# --- offline thought rules ----------------------------------------------------------------


def _third_person(verb: str) -> str:
    if verb.endswith(("sh", "ch", "ss", "o")):
        return verb + "es"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def key_sentences(speaker: str, text: str, min_words: int = 4) -> list[str]:
    """Return the sentences of one turn worth remembering (offline Key Events rule).

    A sentence qualifies when it is not a question, has ``min_words``+ words and either speaks
    in the first person or recommends (recommend/suggest/try/should). Greetings fail the length
    or person test. Semicolons become commas (the reply format uses ';').
    """
    out = []
    for sentence in _SENTENCE.split(text.strip()):
        sentence = sentence.strip().replace(";", ",")
        ws = set(words(sentence))
        if sentence.endswith("?") or len(words(sentence)) < min_words:
            continue
        if ws & FIRST_PERSON or ws & RECOMMEND:
            out.append(f"{speaker}: {sentence}")
    return out


def compress(event: str, speakers: tuple[str, ...]) -> str:
    """Offline inductive thought: ``speaker: sentence`` -> a short third-person statement.

    Leading interjections and filler words are dropped; first-person words become the
    speaker's name ("I'm" -> "Mara is", "my" -> "Mara's"), second-person words the other
    speaker's name when there are two speakers. Verbs other than am/have/do keep their form.
    """
    me, sep, body = event.partition(": ")
    if not sep or me not in speakers:
        me, body = "", event
    others = [s for s in speakers if s != me]
    you = others[0] if me and len(others) == 1 else ""
    body = _INTERJECTION.sub("", body.strip()).strip()
    out: list[str] = []
    tokens = _TOKEN.findall(body.replace("\u2019", "'"))
    for i, tok in enumerate(tokens):
        low = tok.lower()
        if low in FILLERS:
            continue
        if low in _PERSON and (me if "{me}" in _PERSON[low] else you):
            out.append(_PERSON[low].format(me=me, you=you))
        elif i and tokens[i - 1].lower() == "i" and me and (low in _AFTER_I or low in _PRESENT):
            out.append(_AFTER_I.get(low) or _third_person(low))
        else:
            out.append(tok)
    text = " ".join(out)
    text = re.sub(r"\s+([^\w\s'(])", r"\1", text).rstrip(".!,; ")
    return text[:1].upper() + text[1:] if text else event.strip()


# --- Key Events -------------------------------------------------------------------------------


def parse_key_events(reply: str) -> list[tuple[str, str]]:
    """Parse ``key piece;timestamp,key piece;timestamp`` (commas inside pieces allowed).

    An empty reply or "none" means no key event; text without any ``;YYYY-MM-DD`` is an error.
    """
    text = reply.strip()
    if not text or text.lower().strip(".'\" ") in {"none", "no key events"}:
        return []
    found = [(m.group(1).strip(" ,"), m.group(2)) for m in _KEY_EVENT.finditer(text)]
    found = [(piece, ts) for piece, ts in found if piece]
    if not found:
        raise ParseError(f"no 'key piece;timestamp' in reply {text[:60]!r}")
    return found


def offline_key_events(stm: str, speakers: tuple[str, ...] = (), **_: object) -> str:
    """Key events: the qualifying sentences (``key_sentences``) of each ``[date] speaker: text``
    line of the STM, with that line's date, in the prompt's reply format."""
    out = []
    for line in stm.splitlines():
        m = re.match(r"^\[(\d{4}-\d{2}-\d{2})\]\s+(.*?):\s(.*)$", line)
        if m:
            out += [f"{piece};{m.group(1)}" for piece in key_sentences(m.group(2), m.group(3))]
    return ",".join(out)


KEY_EVENTS_TASK: PromptTask[list[tuple[str, str]]] = PromptTask(
    name="caim.key_events",
    template=(("system", KEY_EVENTS_PROMPT), ("user", "{stm}")),
    parse=parse_key_events,
    offline=offline_key_events,
    fallback=[],
    stage="memory",
    max_tokens=1024,
    source=SOURCE_A.format(".3"),
    reply=KEY_EVENTS_REPLY,
)


# --- Inductive thoughts ----------------------------------------------------------------------


def parse_thought(reply: str, known: frozenset[str] = frozenset()) -> tuple[list[str], str, str]:
    """Parse ``tag1,tag2,tag3 | inductive thought | timestamp`` (first such line).

    Tags outside the ontology are dropped (up to 3 kept; none is allowed). The timestamp must
    contain a YYYY-MM-DD date.
    """
    for line in reply.strip().splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) >= 3 and (day := ISO_DATE.search(parts[-1])) and parts[1]:
            try:
                tags = parse_tags(parts[0], known)
            except ParseError:
                tags = []
            return tags[:3], " | ".join(parts[1:-1]), day.group(1)
    raise ParseError(f"expected 'tags | thought | timestamp', got {reply[:60]!r}")


def offline_thought(
    ontology: str, event: str, timestamp: str, speakers: tuple[str, ...] = (), **_: object
) -> str:
    """Tags by lexical match (up to three), thought = ``compress(event)``, the event's date."""
    names = frozenset(w for s in speakers for w in words(s))
    tags = Ontology(json.loads(ontology)).select(event, skip=names)
    return f"{','.join(tags)} | {compress(event, speakers)} | {timestamp}"


def thought_task(known: frozenset[str]) -> PromptTask[tuple[list[str], str, str] | None]:
    """Inductive thought + tags for one key event; fallback None (the method keeps the event)."""
    return PromptTask(
        name="caim.inductive_thought",
        template=THOUGHT_PROMPT,
        parse=partial(parse_thought, known=known),
        offline=offline_thought,
        fallback=None,
        stage="memory",
        max_tokens=128,
        source=SOURCE_OURS,
        reply=Pattern(rf"{tags_pattern(known)} \| [^|\n]{{3,200}} \| {_ISO}"),
    )


# --- Memory Review --------------------------------------------------------------------------


def parse_review(reply: str, n: int) -> list[tuple[list[int], list[str], str, str]]:
    """Parse review lines ``[i,j] tags | thought | timestamp`` into (0-based ids, tags, thought,
    date). Every id must be in 1..n; no valid line is a ParseError.

    A memory a later line names again stays with the first line that names it, and a line left
    without memories is skipped (the Review step is ours, not the paper's); rejecting the whole
    review lost 3 of 20 SmolLM2 reviews to a repeated ``[1]`` (bench/structured.py)."""
    out, used = [], set()
    for line in reply.strip().splitlines():
        m = re.match(r"^\s*\[([\d,\s]+)\]\s*(.*)$", line)
        if not m:
            continue
        ids = [int(x) - 1 for x in re.findall(r"\d+", m.group(1))]
        parts = [p.strip() for p in m.group(2).split("|")]
        day = ISO_DATE.search(parts[-1])
        if len(parts) < 3 or not day or not parts[1]:
            continue
        if not ids or any(not 0 <= i < n for i in ids):
            raise ParseError(f"review line names unknown memories: {line[:60]!r}")
        ids = [i for i in dict.fromkeys(ids) if i not in used]
        if not ids:
            continue
        used.update(ids)
        tags = [t for t in re.split(r"\s*,\s*", parts[0].lower()) if t]
        out.append((ids, tags, " | ".join(parts[1:-1]), day.group(1)))
    if not out:
        raise ParseError(f"no '[ids] tags | thought | timestamp' line in {reply[:60]!r}")
    return out


def offline_review(entries: list[ThoughtEntry], groups: list[list[int]], **_: object) -> str:
    """Merge each group of duplicates (found by the method: cosine >= threshold) into the
    longest thought, the union of tags and the latest timestamp; other memories unchanged."""
    lines = []
    for group in groups:
        members = [entries[i] for i in group]
        best = max(members, key=lambda e: (len(e["thought"]), e["timestamp"]))
        tags = list(dict.fromkeys(t for e in members for t in e["tags"]))
        latest = max(e["timestamp"] for e in members)
        ids = ",".join(str(i + 1) for i in group)
        lines.append(f"[{ids}] {','.join(tags)} | {best['thought']} | {latest}")
    return "\n".join(lines)


def review_task(n: int) -> PromptTask[list[tuple[list[int], list[str], str, str]] | None]:
    """Memory Review of ``n`` memories sharing a tag; fallback None leaves them unchanged."""
    return PromptTask(
        name="caim.review",
        template=REVIEW_PROMPT,
        parse=partial(parse_review, n=n),
        offline=offline_review,
        fallback=None,
        stage="memory",
        max_tokens=1024,
        source=SOURCE_OURS,
        reply=review_reply(n),
    )


# --- STM summary ----------------------------------------------------------------------------


def parse_summary(reply: str) -> str:
    """Return the summary text; an empty reply is a ParseError (fallback: the full STM)."""
    if not reply.strip():
        raise ParseError("empty STM summary")
    return reply.strip()


def offline_stm_summary(dialogue: str, **_: object) -> str:
    """The extractive summary of ``blocks.summarize`` (self-disclosing sentences), else the dialogue."""
    return extractive_summary(dialogue=dialogue) or dialogue


STM_SUMMARY_TASK: PromptTask[str | None] = PromptTask(
    name="caim.stm_summary",
    template=STM_SUMMARY_PROMPT,
    parse=parse_summary,
    offline=offline_stm_summary,
    fallback=None,
    stage="memory",
    max_tokens=256,
    source=SOURCE_OURS,
)
