"""MemoChat: structured topic-summary-dialogue memos, LLM memo selection, memo-grounded response.

Paper: Lu et al., "MemoChat: Tuning LLMs to Use Memos for Consistent Long-Range Open-Domain
Conversation", arXiv:2308.08239 (2023). A "memorization-retrieval-response" loop: the LLM writes
memos (topic, summary and the dialogue lines of each topic) from the conversation, selects the
memos whose topics relate to the current user input (numbered topic options with a "NOTO" =
none-of-the-others option, answered as ``N#M``), and answers from the selected memos and the
recent dialogue. Baseline "MemoChat" of THEANINE (Ong et al., NAACL 2025) sec. 3.2.

Implemented: ``MEMO_WRITE_TASK`` (stage ``memory``) once per observed session over its numbered
lines; each topic becomes a MemoryItem (kind ``summary``) whose text is the topic, the summary and
(``show_dialogue``) the topic's dialogue lines, with ``source_ids`` = exactly those turns.
``MEMO_SELECT_TASK`` (stage ``answer``) picks memos for the last ``context_turns`` turns (or the
probing question). Offline twins: topic segmentation where a turn sharing no content word with
the running segment opens a new one (segments of >= ``min_turns``), topic = the segment's top
content words, summary = its extractive summary; selection = memos sharing stemmed content words
with the query (at most ``max_selected``).

Deviations:
- The prompts are reconstructions from the paper's description (the original prompt text is not
  in our files); the JSON keys ``topic``/``summary``/``start``/``end``, the ``N#M`` answer and the
  NOTO option follow the paper's task formats, the wording is ours.
- Memos are written once per finished session (THEANINE's per-session setting), not whenever the
  running dialogue exceeds a length threshold; the current session stays in the recent dialogue.
- Unparseable replies (counted in ``failures``): writing falls back to the offline memos of the
  session, selection to the offline lexical choice. Out-of-range line numbers are clamped.
- Off-the-shelf LLM (the configured generator), not the paper's MemoChat-tuned models.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import replace
from functools import partial
from typing import Any

from recallbench.embed.base import TextEmbedder
from recallbench.errors import ConfigError
from recallbench.llm.task import ParseError, PromptTask
from recallbench.llm.types import LLMClient
from recallbench.memory._base import query_text
from recallbench.memory._llm_common import (
    LLMBaseline,
    ResponseStyle,
    choose_options,
    load_json,
    parse_options,
    render_options,
)
from recallbench.memory._summarize import extractive_summary
from recallbench.records import MemoryItem, Query, Recall, Session
from recallbench.text import content_words
from recallbench.text import crude_stem as stem

# Reconstruction after Lu et al. (2023) sec. 3 "memo writing" (see Deviations).
MEMO_WRITE_PROMPT = (
    "You will be shown a {n_lines}-line conversation between {speakers}. Read and understand "
    "it, then do the following:\n"
    "1 - Conclude all topics of the conversation, each as a concise span.\n"
    "2 - Determine the line range of each topic. The ranges do not intersect and follow each "
    "other in order from line 1 to line {n_lines}.\n"
    "3 - Summarize what was said on each topic in brief sentences that name the speakers.\n"
    "4 - Report the result in JSON only: a list of objects with the keys 'topic', 'summary', "
    "'start' and 'end' (line numbers from 1 to {n_lines}), for example "
    '[{{"topic": "...", "summary": "...", "start": 1, "end": 4}}].\n\n'
    "Conversation:\n{dialogue}\n\nResult:"
)
MEMO_WRITE_SOURCE = "reconstruction after Lu et al. 2023 sec. 3 (memo writing)"

# Reconstruction after Lu et al. (2023) sec. 3 "memo retrieval".
MEMO_SELECT_PROMPT = (
    "You will be shown one query sentence and {n_options} topic options. Select every topic "
    "option related to the query sentence. Option {none_option} is NOTO (none of the others): "
    "select it only if no other option is related. Report only the selected option numbers, "
    "separated by '#', e.g. 1#3.\n\n"
    "Query sentence:\n{query}\n\nTopic options:\n{options}\n\nResult:"
)
MEMO_SELECT_SOURCE = "reconstruction after Lu et al. 2023 sec. 3 (memo retrieval)"

# Reconstruction after Lu et al. (2023) sec. 3 "chatting with memos".
MEMO_RESPONSE_PROMPT = (
    "You are {speaker}, a dialogue agent talking with {partner}. You will be shown related "
    "evidence from your earlier conversations (memos: topic, summary and dialogue) and the "
    "recent dialogue. Read and understand them, then write {speaker}'s next response: one "
    "concise, coherent and engaging utterance.\n\n"
    "Related evidence:\n{memory}\n\nRecent dialogue:\n{dialogue}\n\n{speaker}:"
)
MEMO_RESPONSE_SOURCE = "reconstruction after Lu et al. 2023 sec. 3 (response with memos)"

_NUMBERED = re.compile(r"^\((\d+)\)\s*([^:]+):\s*(.*)$")


def number_lines(session: Session) -> str:
    """Render ``session`` as ``(n) speaker: text`` lines, numbered from 1."""
    return "\n".join(f"({n}) {t.speaker}: {t.text}" for n, t in enumerate(session.turns, 1))


def _line_number(value: Any) -> int:
    found = re.search(r"\d+", str(value))
    if found is None:
        raise ValueError(value)
    return int(found.group())


def parse_memos(reply: str) -> tuple[dict[str, Any], ...]:
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
    memos = []
    for el in elements:
        if not isinstance(el, dict) or not str(el.get("topic") or "").strip():
            continue
        try:
            start, end = _line_number(el.get("start")), _line_number(el.get("end"))
        except ValueError:
            continue
        summary = str(el.get("summary") or "").strip()
        memos.append(
            {"topic": str(el["topic"]).strip(), "summary": summary, "start": start, "end": end}
        )
    if not memos:
        raise ParseError(f"no memo with topic and line range in reply {reply[:80]!r}")
    return tuple(memos)


def _topic(lines: list[str], topic_words: int) -> str:
    found = [w for line in lines for w in content_words(line)]
    counts = Counter(stem(w) for w in found)
    first = {}
    for i, w in enumerate(found):
        first.setdefault(stem(w), (i, w))
    ranked = sorted(first, key=lambda s: (-counts[s], -len(first[s][1]), first[s][0]))
    return ", ".join(first[s][1] for s in ranked[:topic_words])


def offline_memos(*, dialogue: str, min_turns: int = 2, topic_words: int = 3, **_: Any) -> str:
    """Offline memo writing: lexical topic segmentation of the numbered ``dialogue``.

    A turn that shares no stemmed content word with the running segment opens a new segment
    once that segment has ``min_turns`` turns. Returns the JSON an LLM would give.
    """
    rows = [m.groups() for m in map(_NUMBERED.match, dialogue.splitlines()) if m]
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


def offline_select(*, query: str, option_texts: list[str], max_selected: int, **_: Any) -> str:
    """Offline memo selection: options sharing stemmed content words with ``query``, as ``N#M``."""
    chosen = choose_options(query, option_texts, max_selected)
    return "#".join(str(i + 1) for i in chosen) if chosen else str(len(option_texts) + 1)


class MemoChat(LLMBaseline):
    """Write topic memos per session, let the LLM pick the relevant ones, answer from them.

    Args:
        llm, embedder: collaborators (selection is by the LLM; the embedder is unused).
        context_turns: turns of the current session that form the query sentence.
        show_dialogue: include each memo's dialogue lines in the recalled text.
        max_selected, min_turns, topic_words: offline twins (memos selected, segment length,
            topic size).
        response_prompt: ``paper`` (reconstructed MemoChat prompt) or ``theanine`` (Fig. 24).
    """

    RESPONSE_PROMPT = MEMO_RESPONSE_PROMPT
    TASKS = ("write", "select")

    def __init__(
        self,
        llm: LLMClient,
        embedder: TextEmbedder,
        *,
        context_turns: int = 1,
        show_dialogue: bool = True,
        max_selected: int = 3,
        min_turns: int = 2,
        topic_words: int = 3,
        response_prompt: ResponseStyle = "paper",
    ) -> None:
        super().__init__(llm, embedder, response_prompt=response_prompt)
        if min(max_selected, min_turns, topic_words) < 1:
            raise ConfigError("max_selected, min_turns and topic_words must be >= 1")
        self.context_turns = context_turns
        self.show_dialogue = show_dialogue
        self.max_selected = max_selected
        offline = partial(offline_memos, min_turns=min_turns, topic_words=topic_words)
        self.write_task = PromptTask(
            "memochat.write_memos",
            MEMO_WRITE_PROMPT,
            parse_memos,
            offline,
            None,
            "memory",
            768,
            source=MEMO_WRITE_SOURCE,
        )
        self.select_task = PromptTask(
            "memochat.select_memos",
            MEMO_SELECT_PROMPT,
            offline=offline_select,
            stage="answer",
            max_tokens=32,
            source=MEMO_SELECT_SOURCE,
        )
        self._memos: list[MemoryItem] = []

    def _clear(self) -> None:
        self._memos = []

    def _write(self, session: Session) -> None:
        if not session.turns:
            return
        fields = {
            "n_lines": len(session.turns),
            "speakers": " and ".join(self.speakers),
            "dialogue": number_lines(session),
        }
        result = self.llm.run(self.write_task, **fields)
        memos = result.value
        if not self._count("write", result):
            memos = parse_memos(offline_memos(**fields))
        self._memos.extend(self._items(session, memos))

    def _items(self, session: Session, memos: tuple[dict[str, Any], ...]) -> list[MemoryItem]:
        n, items = len(session.turns), []
        for j, memo in enumerate(memos):
            start, end = sorted(min(max(memo[k], 1), n) for k in ("start", "end"))
            turns = session.turns[start - 1 : end]
            text = f"Topic: {memo['topic']}\nSummary: {memo['summary'] or '(none)'}"
            if self.show_dialogue:
                text += "\nDialogue:\n" + "\n".join(f"{t.speaker}: {t.text}" for t in turns)
            items.append(
                MemoryItem(
                    item_id=f"{session.session_id}/memo{j}",
                    text=text,
                    kind="summary",
                    created=session.start,
                    source_ids=tuple(t.turn_id for t in turns),
                    attrs={
                        "session": session.index,
                        "topic": memo["topic"],
                        "summary": memo["summary"],
                        "start": start,
                        "end": end,
                    },
                )
            )
        return items

    def recall(self, query: Query) -> Recall:
        """Return the memos the selection step picks for the query sentence."""
        self.check_episode(query)
        chosen: tuple[int, ...] = ()
        if self._memos:
            chosen = self._select(query_text(query, self.context_turns))
        items = tuple(self._memos[i] for i in chosen)
        info = {
            "method": "MemoChat",
            "store_size": len(self._memos),
            "selected": [item.item_id for item in items],
            "failures": dict(self.failures),
        }
        return Recall(items, "\n\n".join(item.text for item in items), info)

    def _select(self, query: str) -> tuple[int, ...]:
        options = [f"{m.attrs['topic']}: {m.attrs['summary']}" for m in self._memos]
        n = len(options)
        task = replace(
            self.select_task, parse=partial(parse_options, n_options=n, none_option=n + 1)
        )
        result = self.llm.run(
            task,
            query=query,
            n_options=n + 1,
            none_option=n + 1,
            options=render_options([*options, "NOTO: none of the others"]),
            option_texts=options,
            max_selected=self.max_selected,
        )
        if self._count("select", result):
            return result.value
        return choose_options(query, options, self.max_selected)

    def snapshot(self) -> list[MemoryItem]:
        """Return every memo written so far."""
        return list(self._memos)
