"""MemoChat's memo side: the memo JSON (its reply shape), the parser, and the offline twins of
memo writing and memo selection (``_memochat`` holds the prompts and the method)."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from recallbench.llm.shapes import JsonReply, Pattern
from recallbench.llm.task import ParseError
from recallbench.memory.blocks.llm_common import choose_options, load_json
from recallbench.memory.blocks.summarize import extractive_summary
from recallbench.records import Session
from recallbench.text import content_words
from recallbench.text import crude_stem as stem

_NUMBERED = re.compile(r"^\((\d+)\)\s*([^:]+):\s*(.*)$")


class _Memo(BaseModel):
    model_config = ConfigDict(extra="forbid")
    topic: str = Field(max_length=80)
    summary: str = Field(max_length=300)
    start: int
    end: int


class MemoList(BaseModel):
    """The memo-writing reply as a JSON object (strict mode wants an object, not a list)."""

    model_config = ConfigDict(extra="forbid")
    memos: list[_Memo] = Field(max_length=12)


# Reply shapes (structured outputs): the memo list the prompt asks for (rendered back to the
# list for ``parse_memos``), and the ``N#M`` selection.
MEMOS_REPLY = JsonReply(MemoList, render=lambda obj: json.dumps(obj["memos"]))
SELECT_REPLY = Pattern(r"\d{1,2}(#\d{1,2}){0,9}")


def number_lines(session: Session) -> str:
    """Render ``session`` as ``(n) speaker: text`` lines, numbered from 1."""
    return "\n".join(f"({n}) {t.speaker}: {t.text}" for n, t in enumerate(session.turns, 1))


def _line_number(value: Any) -> int:
    found = re.search(r"\d+", str(value))
    if found is None:
        raise ValueError(value)
    return int(found.group())


class Memo(TypedDict):
    """One memo of a writing reply: its topic, summary and 1-based line range."""

    topic: str
    summary: str
    start: int
    end: int


def parse_memos(reply: str) -> tuple[Memo, ...]:
    """Parse a memo-writing reply into ``{topic, summary, start, end}`` dicts.

    Tolerates code fences and prose around the JSON, single quotes, trailing commas, an object
    wrapping the list (``{"memos": [...]}``), a single memo object and line numbers given as
    strings; elements without a topic or a line number are dropped. Raises ParseError when no
    memo is left.
    """
    data = load_json(reply)
    if isinstance(data, dict) and "topic" not in data:
        data = next((v for v in data.values() if isinstance(v, list)), [])
    elements = [data] if isinstance(data, dict) else data if isinstance(data, list) else []
    memos: list[Memo] = []
    for el in elements:
        if not isinstance(el, dict) or not str(el.get("topic") or "").strip():
            continue
        try:
            start, end = _line_number(el.get("start")), _line_number(el.get("end"))
        except ValueError:
            continue
        summary = str(el.get("summary") or "").strip()
        memos.append(Memo(topic=str(el["topic"]).strip(), summary=summary, start=start, end=end))
    if not memos:
        raise ParseError(f"no memo with topic and line range in reply {reply[:80]!r}")
    return tuple(memos)


def _topic(lines: list[str], topic_words: int) -> str:
    found = [w for line in lines for w in content_words(line)]
    counts = Counter(stem(w) for w in found)
    first: dict[str, tuple[int, str]] = {}
    for i, w in enumerate(found):
        first.setdefault(stem(w), (i, w))
    ranked = sorted(first, key=lambda s: (-counts[s], -len(first[s][1]), first[s][0]))
    return ", ".join(first[s][1] for s in ranked[:topic_words])


def offline_memos(*, dialogue: str, min_turns: int = 2, topic_words: int = 3, **_: object) -> str:
    """Offline memo writing: lexical topic segmentation of the numbered ``dialogue``.

    A turn that shares no stemmed content word with the running segment opens a new segment
    once that segment has ``min_turns`` turns. Returns the JSON an LLM would give.
    """
    rows = [(m[1], m[2], m[3]) for m in map(_NUMBERED.match, dialogue.splitlines()) if m]
    segments: list[list[tuple[str, str, str]]] = []
    seen: set[str] = set()
    for row in rows:
        words_ = {stem(w) for w in content_words(row[2])}
        if not segments or (len(segments[-1]) >= min_turns and not words_ & seen):
            segments.append([])
            seen = set()
        segments[-1].append(row)
        seen |= words_
    memos = []
    for seg in segments:
        lines = [f"{speaker.strip()}: {text}" for _, speaker, text in seg]
        summary = extractive_summary(dialogue="\n".join(lines), max_sentences=2)
        memos.append(
            {
                "topic": _topic([text for *_, text in seg], topic_words) or "small talk",
                "summary": " ".join(summary.splitlines()),
                "start": int(seg[0][0]),
                "end": int(seg[-1][0]),
            }
        )
    return json.dumps(memos)


def offline_select(*, query: str, option_texts: list[str], max_selected: int, **_: object) -> str:
    """Offline memo selection: options sharing stemmed content words with ``query``, as ``N#M``."""
    chosen = choose_options(query, option_texts, max_selected)
    return "#".join(str(i + 1) for i in chosen) if chosen else str(len(option_texts) + 1)
