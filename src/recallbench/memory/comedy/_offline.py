"""COMEDY offline side: parsers of the three task replies and the deterministic offline
implementations (session memories, compression, selection) the ``extractive`` backend uses."""

from __future__ import annotations

import re
from collections import defaultdict

from recallbench.llm.task import ParseError
from recallbench.memory.blocks.llm_common import (
    bullet_lines,
    choose_options,
    jaccard,
    stems,
)
from recallbench.memory.blocks.summarize import parse_sentences
from recallbench.text import words

SECTIONS = {
    "events": re.compile(r"^\W*(?:past |key )?events?(?: records?)?\W*$", re.IGNORECASE),
    "portraits": re.compile(
        r"^\W*(?:user |speaker )?(?:portraits?|descriptions?|personas?)\W*$", re.IGNORECASE
    ),
    "relation": re.compile(
        r"^\W*(?:user[- ]bot )?relation(?:ship)?s?(?: dynamics)?\W*$", re.IGNORECASE
    ),
}
_PORTRAIT = re.compile(
    r"\b(?:lov(?:e|es|ed|ing)|likes?|liked|enjoy\w*|hat(?:e|es|ed)|prefer\w*|favou?rite|fan|"
    r"passion\w*|happy|sad|excited|worried|stress\w*|tired|nervous|angry|proud|lonely|glad|"
    r"scared|upset|afraid|anxious|bored)\b",
    re.IGNORECASE,
)
_NO_MEMORY = re.compile(r"^\W*no (?:new )?memor(?:y|ies)\W*$", re.IGNORECASE)
_VERBS = frozenset(
    """love like enjoy hate prefer work live want need feel think play miss plan
    hope wish know get take teach study run cook read write watch own try""".split()
)
_THIRD = [
    (r"\bI(?:'m| am)\b", "{n} is"),
    (r"\bI've\b", "{n} has"),
    (r"\bI'll\b", "{n} will"),
    (r"\bI'd\b", "{n} would"),
    (r"\bmy\b", "{n}'s"),
    (r"\bmyself\b", "themselves"),
    (r"\bme\b", "{n}"),
]


def parse_session_memories(reply: str) -> tuple[str, ...]:
    """Parse a task-1 reply: one memory per line; "No memory" is a valid empty answer."""
    if _NO_MEMORY.match(reply.strip()):
        return ()
    return parse_sentences(reply)


def parse_compressed(reply: str) -> dict[str, tuple[str, ...]]:
    """Parse a compression reply into ``events``/``portraits``/``relation`` line tuples.

    Headers may carry content on the same line (``Relationship: close friends``), be bold or
    numbered, or be named ``User portrait``/``Past events``/``User-bot relationship``; text
    before the first header is ignored. Raises ParseError when every section is empty.
    """
    out: dict[str, list[str]] = {k: [] for k in SECTIONS}
    current = None
    for raw in reply.splitlines():
        head, sep, rest = raw.partition(":")
        section = next((k for k, rx in SECTIONS.items() if sep and rx.match(head)), None)
        if section is not None:
            current, raw = section, rest.lstrip("*_ ")  # **Header:** text
        if current is not None:
            out[current].extend(line for line in bullet_lines(raw) if len(words(line)) >= 2)
    if not any(out.values()):
        raise ParseError(f"no Events/Portraits/Relationship section in reply {reply[:80]!r}")
    return {k: tuple(v) for k, v in out.items()}


def third_person(name: str, sentence: str, max_words: int) -> str:
    """Rewrite a first-person ``sentence`` about ``name`` in the third person, cut to length."""

    def subject(match: re.Match[str]) -> str:
        verb = match.group(1)
        if verb in ("have", "do", "am"):
            verb = {"have": "has", "do": "does", "am": "is"}[verb]
        elif verb in _VERBS:
            verb += "es" if verb.endswith(("sh", "ch", "o")) else "s"
        return f"{name} {verb}"

    text = re.sub(r"\bI (\w+)", subject, sentence)
    for pattern, repl in _THIRD:
        text = re.sub(pattern, repl.format(n=name), text, flags=re.IGNORECASE)
    text = re.sub(r"\bI\b", name, text)
    cut = text.split()
    return " ".join(cut[:max_words]).rstrip(",;") + ("..." if len(cut) > max_words else "")


def _memory_lines(memories: str) -> list[tuple[int, str, str]]:
    session, rows = 0, []
    for line in memories.splitlines():
        if line.startswith("Session ") and line.rstrip().endswith(":"):
            session += 1
        elif ": " in line:
            speaker, _, text = line.partition(": ")
            rows.append((session, speaker.strip(), text.strip()))
    return rows


def offline_compress(
    *,
    memories: str,
    speakers: str,
    max_events: int = 10,
    max_portrait: int = 2,
    event_words: int = 20,
    **_: object,
) -> str:
    """Offline compression of rendered session memories into the three-section reply."""
    rows = _memory_lines(memories)
    events: list[str] = []
    portraits: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
    for n, (_line, speaker, text) in enumerate(rows):
        short = third_person(speaker, text, event_words)
        if _PORTRAIT.search(text):
            recurrence = len({s for s, _, t in rows if stems(t) & stems(text)})
            portraits[speaker].append((-recurrence, -n, short))
            continue
        events = [e for e in events if jaccard(e, short) < 0.5] + [short]
    names = speakers.split(" and ")
    lines = ["Events:", *(f"- {e}" for e in events[-max_events:]), "Portraits:"]
    for name in names:
        best = [text for *_, text in sorted(portraits.get(name, []))[:max_portrait]]
        if best:
            lines.append("- " + " ".join(best))
    lines += ["Relationship:", f"- {_relation(rows, names)}"]
    return "\n".join(lines)


def _relation(rows: list[tuple[int, str, str]], names: list[str]) -> str:
    counts = {name: sum(1 for _, s, _ in rows if s == name) for name in names}
    sessions = len({s for s, _, _ in rows})
    shares = " and ".join(f"{name} {counts[name]}" for name in names)
    text = f"{' and '.join(names)} have talked over {sessions} sessions, sharing personal news"
    text += f" (memories: {shares})"
    by_speaker = [set().union(*(stems(t) for _, s, t in rows if s == name)) for name in names]
    common = sorted(set.intersection(*by_speaker)) if len(by_speaker) > 1 else []
    return text + (f"; both talked about {', '.join(common[:3])}." if common else ".")


def offline_select(
    *, option_texts: list[str], dialogue: str, max_selected: int, **_: object
) -> str:
    """Offline selection: compressed items sharing stems with the context, as ``1, 4``."""
    context = "\n".join(line.partition(": ")[2] for line in dialogue.splitlines())
    chosen = choose_options(context, option_texts, max_selected)
    return ", ".join(str(i + 1) for i in chosen) if chosen else "none"
