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

from dataclasses import replace
from functools import partial
from typing import Any

from recallbench.embed.base import TextEmbedder
from recallbench.errors import ConfigError
from recallbench.llm.protocol import LLMClient
from recallbench.llm.task import PromptTask
from recallbench.memory._base import query_text
from recallbench.memory.blocks.llm_common import (
    LLMBaseline,
    ResponseStyle,
    choose_options,
    parse_options,
    render_options,
)
from recallbench.memory.memochat._memos import (
    MEMOS_REPLY,
    SELECT_REPLY,
    Memo,
    number_lines,
    offline_memos,
    offline_select,
    parse_memos,
)
from recallbench.records import MemoryItem, Query, Recall, Session

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
            reply=MEMOS_REPLY,
        )
        self.select_task: PromptTask[tuple[int, ...]] = PromptTask(
            "memochat.select_memos",
            MEMO_SELECT_PROMPT,
            partial(parse_options, n_options=0),  # the options are bound per call (_select)
            offline_select,
            (),  # unused: a failed selection falls back to choose_options
            stage="answer",
            max_tokens=32,
            source=MEMO_SELECT_SOURCE,
            reply=SELECT_REPLY,
        )
        self._memos: list[MemoryItem] = []

    def _clear(self) -> None:
        self._memos = []

    def _write(self, session: Session) -> None:
        if not session.turns:
            return
        fields: dict[str, Any] = {
            "n_lines": len(session.turns),
            "speakers": " and ".join(self.speakers),
            "dialogue": number_lines(session),
        }
        result = self.llm.run(self.write_task, **fields)
        memos = result.value
        if not self._count("write", result) or memos is None:
            memos = parse_memos(offline_memos(**fields))
        self._memos.extend(self._items(session, memos))

    def _items(self, session: Session, memos: tuple[Memo, ...]) -> list[MemoryItem]:
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
