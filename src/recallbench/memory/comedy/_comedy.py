"""COMEDY: session memories compressed into events, speaker portraits and their relationship.

Paper: Chen et al., "Compress to Impress: Unleashing the Potential of Compressive Memory in
Real-World Long-Term Conversations" (COMEDY), arXiv:2402.11975 (2024). One LLM does three tasks:
(1) session-level memory extraction, (2) memory compression of ALL session memories into a
compressive memory: concise past events, user portraits (behaviour patterns, personality,
emotions) and the user-bot relationship, (3) memory-grounded response generation. Baseline
"COMEDY" of THEANINE (Ong et al., NAACL 2025) sec. 3.2, which "selects compressed memories to
augment response generation".

Implemented: ``COMEDY_SESSION_TASK`` (stage ``memory``) per observed session (items of kind
``summary``, layer ``session``); ``COMEDY_COMPRESS_TASK`` (stage ``memory``) re-compresses every
session memory after each session into items of kind ``event`` and ``profile`` (role
``portrait`` or ``relation``); ``COMEDY_SELECT_TASK`` (stage ``answer``) picks compressed items
for the recent context (``select: false`` shows the whole compressive memory, as COMEDY itself
does). Offline twins: extractive first-person sentences (``_summarize.extractive_summary``);
compression = those sentences in the third person, cut to ``event_words`` words, newer replacing
similar older ones, preference/emotion statements ranked by recurrence across sessions as the
portrait, a relationship line from counts; selection by shared stemmed content words.

Deviations:
- The prompts are reconstructions from the paper's description (the original prompt text is not
  in our files); wording and the ``Events:``/``Portraits:``/``Relationship:`` output layout are
  ours. THEANINE's selection step has no published prompt; ``COMEDY_SELECT_PROMPT`` is ours.
- COMEDY's user/bot asymmetry is mapped to symmetric two-speaker dialogues (MSC, CC): a portrait
  per speaker and one relationship between them.
- Off-the-shelf LLM (the configured generator), not the paper's COMEDY-tuned models.
- Unparseable replies (counted in ``failures``): the session step keeps no memory for that
  session, compression and selection fall back to their offline twins. Provenance of compressed
  items is approximate (the most-overlapping session memories, else every observed turn).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from functools import partial

from recallbench.embed.base import TextEmbedder
from recallbench.errors import ConfigError
from recallbench.llm.protocol import LLMClient
from recallbench.llm.shapes import Pattern
from recallbench.llm.task import PromptTask
from recallbench.memory._base import query_text, render_history
from recallbench.memory.blocks.llm_common import (
    LLMBaseline,
    ResponseStyle,
    choose_options,
    parse_options,
    render_options,
    trace,
)
from recallbench.memory.blocks.summarize import extractive_summary
from recallbench.memory.comedy._offline import (
    offline_compress,
    offline_select,
    parse_compressed,
    parse_session_memories,
)
from recallbench.records import MemoryItem, Query, Recall, Session

# Reconstruction after Chen et al. (2024) sec. 3, task 1 "session-level memory summarization".
COMEDY_SESSION_PROMPT = (
    "Below is one session of a long-term conversation between {speakers}. Extract the "
    "memories worth keeping from it: events each speaker went through, personal details, "
    "preferences and habits, emotions, and how the two relate to each other. Write one short "
    "sentence per line, starting with the name of the speaker it is about. If the session holds "
    'nothing worth remembering, write "No memory".\n\nSession:\n{dialogue}\n\nMemories:'
)
# Reconstruction after Chen et al. (2024) sec. 3, task 2 "memory compression".
COMEDY_COMPRESS_PROMPT = (
    "Below are the memories of all past sessions between {speakers}, in order. Compress them "
    "into a short compressive memory with three parts:\n"
    "Events: the key past events, one concise line each, keeping the latest state of things "
    "that changed.\n"
    "Portraits: for each speaker, their personality, behaviour patterns, preferences and "
    "emotional state, one line per speaker starting with the name.\n"
    "Relationship: one line on the relationship between {speakers} and how it has developed.\n"
    "Use exactly these three headers.\n\nSession memories:\n{memories}\n\nCompressive memory:"
)
# Ours: THEANINE sec. 3.2 says COMEDY "selects compressed memories"; no prompt is published.
COMEDY_SELECT_PROMPT = (
    "Below are numbered memories about {speakers} and the current conversation. Select the "
    "memories that help {speaker} write the next response. Reply with their numbers separated "
    'by commas, or "none" if no memory helps.\n\nMemories:\n{options}\n\n'
    "Current conversation:\n{dialogue}\n\nSelected:"
)
# Reconstruction after Chen et al. (2024) sec. 3, task 3 "memory-grounded response generation".
COMEDY_RESPONSE_PROMPT = (
    "You are {speaker}, talking with {partner}. Below is your compressive memory of your past "
    "conversations (events, portraits, relationship) and the current conversation. Write "
    "{speaker}'s next response: natural, short, and consistent with the memory where it is "
    "relevant.\n\nCompressive memory:\n{memory}\n\nCurrent conversation:\n{dialogue}\n\n{speaker}:"
)
# Reply shapes (structured outputs), each the layout its parser reads, lines bounded so that a
# reply ends within ``max_tokens``.
_LINE = r"[^\n]{3,200}"
SESSION_REPLY = Pattern(r"No memory|[A-Z][^\n]{5,200}(\n[A-Z][^\n]{5,200}){0,11}")
COMPRESS_REPLY = Pattern(
    rf"Events:\n(- {_LINE}\n){{1,10}}Portraits:\n(- {_LINE}\n){{1,4}}Relationship: {_LINE}"
)
SELECT_REPLY = Pattern(r"none|\d{1,2}(, ?\d{1,2}){0,9}")
SOURCES = {
    "session": "reconstruction after Chen et al. 2024 sec. 3 (task 1)",
    "compress": "reconstruction after Chen et al. 2024 sec. 3 (task 2)",
    "select": "ours, after THEANINE sec. 3.2 (COMEDY baseline description)",
}


class Comedy(LLMBaseline):
    """Extract session memories, compress all of them, select compressed items, respond.

    Args:
        llm, embedder: collaborators (the embedder is unused: selection is by the LLM).
        select: run the selection step (THEANINE's description); False shows everything.
        context_turns: turns of the current session shown to the selection step.
        max_selected, max_events, max_portrait, event_words, max_sentences: offline twins.
        response_prompt: ``paper`` (reconstructed COMEDY prompt) or ``theanine`` (Fig. 24).
    """

    RESPONSE_PROMPT = COMEDY_RESPONSE_PROMPT
    TASKS = ("session", "compress", "select")

    def __init__(
        self,
        llm: LLMClient,
        embedder: TextEmbedder,
        *,
        select: bool = True,
        context_turns: int = 3,
        max_selected: int = 4,
        max_events: int = 10,
        max_portrait: int = 2,
        event_words: int = 20,
        max_sentences: int = 8,
        response_prompt: ResponseStyle = "paper",
    ) -> None:
        super().__init__(llm, embedder, response_prompt=response_prompt)
        if min(max_selected, max_events, max_portrait, event_words, max_sentences) < 1:
            raise ConfigError(
                "max_selected, max_events, max_portrait, event_words, "
                "max_sentences must all be >= 1"
            )
        self.select, self.context_turns, self.max_selected = select, context_turns, max_selected
        compress = partial(
            offline_compress,
            max_events=max_events,
            max_portrait=max_portrait,
            event_words=event_words,
        )
        session = partial(extractive_summary, max_sentences=max_sentences)
        self.session_task: PromptTask[tuple[str, ...]] = PromptTask(
            "comedy.session_memory",
            COMEDY_SESSION_PROMPT,
            parse_session_memories,
            session,
            (),
            "memory",
            384,
            source=SOURCES["session"],
            reply=SESSION_REPLY,
        )
        self._offline_compress = compress
        self.compress_task = PromptTask(
            "comedy.compress",
            COMEDY_COMPRESS_PROMPT,
            parse_compressed,
            compress,
            None,
            "memory",
            768,
            source=SOURCES["compress"],
            reply=COMPRESS_REPLY,
        )
        self.select_task: PromptTask[tuple[int, ...]] = PromptTask(
            "comedy.select",
            COMEDY_SELECT_PROMPT,
            partial(parse_options, n_options=0),  # the options are bound per call (_select)
            offline_select,
            (),  # unused: a failed selection falls back to choose_options
            stage="answer",
            max_tokens=32,
            source=SOURCES["select"],
            reply=SELECT_REPLY,
        )
        self._session: list[MemoryItem] = []
        self._compressed: list[MemoryItem] = []
        self.version = 0

    def _clear(self) -> None:
        self._session, self._compressed, self.version = [], [], 0

    def _write(self, session: Session) -> None:
        result = self.llm.run(
            self.session_task,
            speakers=" and ".join(self.speakers),
            dialogue=render_history(session.turns),
        )
        self._count("session", result)
        turns: list[tuple[str, tuple[str, ...]]] = [(t.text, (t.turn_id,)) for t in session.turns]
        whole = tuple(t.turn_id for t in session.turns)
        for j, text in enumerate(result.value or ()):
            self._session.append(
                MemoryItem(
                    f"{session.session_id}/comedy/m{j}",
                    text,
                    "summary",
                    session.start,
                    trace(text, turns, whole),
                    {"session": session.index, "layer": "session"},
                )
            )
        if self._session:
            self._compress(session)

    def _compress(self, session: Session) -> None:
        blocks: dict[int, list[str]] = defaultdict(list)
        for item in self._session:
            blocks[int(item.attrs["session"])].append(item.text)
        fields = {
            "speakers": " and ".join(self.speakers),
            "memories": "\n".join(f"Session {i}:\n" + "\n".join(b) for i, b in blocks.items()),
        }
        result = self.llm.run(self.compress_task, **fields)
        parts = result.value
        if not self._count("compress", result) or parts is None:
            offline = self._offline_compress(
                memories=fields["memories"], speakers=fields["speakers"]
            )
            parts = parse_compressed(offline)
        self.version += 1
        candidates = [(item.text, item.source_ids) for item in self._session]
        default = self.observed_ids()
        kinds = {
            "events": ("event", "event"),
            "portraits": ("profile", "portrait"),
            "relation": ("profile", "relation"),
        }
        self._compressed = [
            MemoryItem(
                f"{self.episode_id}/comedy/v{self.version}/{section}{j}",
                text,
                kind,
                session.start,
                trace(text, candidates, default),
                {"layer": "compressed", "role": role, "version": self.version},
            )
            for section, (kind, role) in kinds.items()
            for j, text in enumerate(parts[section])
        ]

    def recall(self, query: Query) -> Recall:
        """Return the compressed items the selection step picks (all with ``select: false``)."""
        self.check_episode(query)
        items = list(self._compressed)
        if self.select and items:
            items = [items[i] for i in self._select(query, items)]
        info = {
            "method": "Comedy",
            "store_size": len(self._compressed),
            "version": self.version,
            "selected": [item.item_id for item in items],
            "failures": dict(self.failures),
        }
        return Recall(tuple(items), "\n".join(item.text for item in items), info)

    def _select(self, query: Query, items: list[MemoryItem]) -> tuple[int, ...]:
        texts = [item.text for item in items]
        task = replace(self.select_task, parse=partial(parse_options, n_options=len(texts)))
        dialogue = (
            f"{query.speaker}: {query.question}"
            if query.question
            else render_history(
                query.history[-self.context_turns :] if self.context_turns > 0 else query.history
            )
        )
        result = self.llm.run(
            task,
            speakers=" and ".join(self.speakers),
            speaker=query.speaker,
            options=render_options(texts),
            dialogue=dialogue,
            option_texts=texts,
            max_selected=self.max_selected,
        )
        if self._count("select", result):
            return result.value
        return choose_options(query_text(query, self.context_turns), texts, self.max_selected)

    def snapshot(self) -> list[MemoryItem]:
        """Return the session memories and the current compressive memory."""
        return [*self._session, *self._compressed]
