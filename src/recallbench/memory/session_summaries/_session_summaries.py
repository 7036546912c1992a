"""Per-session memory summaries: each finished session becomes a few memory sentences.

Paper: Ong et al., "Towards Lifelong Dialogue Agents via Timeline-based Memory Management"
(THEANINE), NAACL 2025, App. I "Memory summarization": at the end of each session gpt-3.5-turbo
summarizes the conversation into memory sentences, the raw memories of every THEANINE baseline
(sec. 3.2). The session-summary memory follows Xu et al., "Beyond Goldfish Memory" (MSC), ACL 2022.

Implemented: the summarization as a PromptTask (stage ``memory``, ``_summarize.SUMMARY_PROMPT``) with
an extractive offline twin (first-person, non-question sentences of a speaker:
``_summarize.extractive_summary``), or ``source: gold`` to use the dataset's own per-session
``Session.gold["summary"]`` (list of sentences: CareCall, CC), ``["persona_session"]`` (MSC facts
revealed in the session) or ``["persona"]`` ({speaker: [facts]}). Memory
sentences become MemoryItems (kind ``summary``, or ``fact`` for gold personas) with
``created = session.start`` and ``source_ids`` = the turns they were extracted from when known,
else every turn of the session. ``recall`` shows all summaries grouped by session.

This class is also the store of ``all_memories``, ``memory_update`` and ``memory_retrieval``:
they change only how items are selected (``_select``), rendered (``_render``) and integrated
(``_integrate``, which runs Bae et al.'s memory update when an updater is set).

Deviations:
- THEANINE prints no summarization prompt; ``SUMMARY_PROMPT`` is ours (same task description).
- The offline summary is extractive (verbatim first-person sentences with a speaker tag), not
  abstractive third-person memories; it is a documented no-LLM baseline.
- Gold ``memory`` (CareCall, the memory BEFORE a session) is not a per-session summary and is
  refused here; it is the input of ``gold_memory``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from recallbench.datasets import needs
from recallbench.embed.base import TextEmbedder
from recallbench.errors import ConfigError
from recallbench.llm.protocol import LLMClient
from recallbench.memory._base import render_history
from recallbench.memory.blocks.baseline import BaselineMethod
from recallbench.memory.blocks.gold import GOLD_SUMMARY_KEYS, attribute, gold_sentences
from recallbench.memory.blocks.prompts import PromptStyle
from recallbench.memory.blocks.summarize import summary_task
from recallbench.records import MemoryItem, Query, Recall, Session
from recallbench.text import normalize_sentence

if TYPE_CHECKING:
    from recallbench.memory.blocks.bae_update import MemoryUpdater

SOURCES = ("llm", "gold")
UNIONS = ("list", "set")


def distinct(items: list[MemoryItem]) -> list[MemoryItem]:
    """The items with one per sentence (``normalize_sentence`` of the text), first kept."""
    seen: set[str] = set()
    out = []
    for item in items:
        key = normalize_sentence(item.text)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


GOLD_KEYS = ("auto", *GOLD_SUMMARY_KEYS)


class SessionSummaries(BaselineMethod):
    """Summarize every finished session into memory sentences and show them all, by session.

    Args:
        llm, embedder: collaborators (the LLM runs the summarization task).
        source: ``llm`` (the summarization task; offline = extractive) or ``gold`` (dataset).
        gold_key: with ``source: gold``, ``summary``, ``persona_session``, ``persona`` or
            ``auto`` (the first present, in that order).
        summarize_speakers: speakers whose sentences are memorized (``None``: all; CareCall:
            ``[user]``, Bae et al. summarize user information only).
        max_sentences, min_words: limits of the extractive offline summary.
        prompt_style: ``theanine`` (Fig. 24) or ``carecall``.
        union: how a session's sentences join the memory: ``list`` (stacked as they come,
            THEANINE's baselines) or ``set`` (Bae et al.'s M' = M u S: a sentence already in
            the memory, after ``normalize_sentence``, is not added again; the older item stays).
    """

    def __init__(
        self,
        llm: LLMClient,
        embedder: TextEmbedder,
        *,
        source: Literal["llm", "gold"] = "llm",
        gold_key: str = "auto",
        summarize_speakers: list[str] | None = None,
        max_sentences: int = 8,
        min_words: int = 4,
        prompt_style: PromptStyle = "theanine",
        union: Literal["list", "set"] = "list",
    ) -> None:
        super().__init__(llm, embedder, prompt_style=prompt_style)
        if union not in UNIONS:
            raise ConfigError(f"union {union!r} unknown (options: {', '.join(UNIONS)})")
        self.union = union
        if source not in SOURCES:
            raise ConfigError(f"source {source!r} unknown (options: {', '.join(SOURCES)})")
        if gold_key not in GOLD_KEYS:
            raise ConfigError(f"gold_key {gold_key!r} unknown (options: {', '.join(GOLD_KEYS)})")
        self.source = source
        self.gold_key = gold_key
        self.summarize_speakers = (
            tuple(summarize_speakers) if summarize_speakers is not None else None
        )
        self.summary_task = summary_task(self.summarize_speakers, max_sentences, min_words)
        self._updater: MemoryUpdater | None = None
        self._items: list[MemoryItem] = []
        self.summary_failures = 0

    def needs(self) -> frozenset[str]:
        """``source: gold`` reads the dataset's per-session summaries or personas."""
        return frozenset({needs.gold(self.gold_key)}) if self.source == "gold" else frozenset()

    @property
    def updater(self) -> MemoryUpdater | None:
        """The memory updater (Algorithm 1 + classifier), or None when memory only accumulates
        (APPEND is the only operation: Bae et al.'s "Memory accumulate")."""
        return self._updater

    # --- writing -------------------------------------------------------------------------

    def _clear(self) -> None:
        self._items = []
        self.summary_failures = 0
        if self._updater is not None:
            self._updater.log = []

    def _write(self, session: Session) -> None:
        self._integrate(self.summarize(session))

    def summarize(self, session: Session) -> list[MemoryItem]:
        """Return the memory sentences of ``session`` as items (LLM/offline or gold)."""
        if self.source == "gold":
            pairs = gold_sentences(session, self.gold_key)
        else:
            pairs = [(s, "summary") for s in self._summarize_llm(session)]
        return [
            MemoryItem(
                item_id=f"{session.session_id}/m{j}",
                text=text,
                kind=kind,
                created=session.start,
                source_ids=attribute(text, session),
                attrs={"session": session.index, "writer": self.source},
            )
            for j, (text, kind) in enumerate(pairs)
        ]

    def _summarize_llm(self, session: Session) -> tuple[str, ...]:
        turns = [
            t
            for t in session.turns
            if self.summarize_speakers is None or t.speaker in self.summarize_speakers
        ]
        if not turns:
            return ()
        present = dict.fromkeys(t.speaker for t in turns)
        result = self.llm.run(
            self.summary_task,
            dialogue=render_history(session.turns),
            about=" and ".join(present),
        )
        if not result.parsed:
            self.summary_failures += 1
        return tuple(result.value or ())

    def _integrate(self, new: list[MemoryItem]) -> None:
        """Add a session's memory sentences: append, or Bae et al.'s update when enabled; with
        ``union: set`` a sentence the memory already holds is kept once."""
        if self._updater is None:
            merged = [*self._items, *new]
        else:
            merged = self._updater.update(self._items, new)
        self._items = distinct(merged) if self.union == "set" else merged

    # --- reading -------------------------------------------------------------------------

    def recall(self, query: Query) -> Recall:
        """Return the selected memory items and their rendering."""
        self.check_episode(query)
        items, info = self._select(query)
        info = {
            "method": type(self).__name__,
            "store_size": len(self._items),
            "summary_failures": self.summary_failures,
            **info,
        }
        if self._updater is not None:
            info["update_ops"] = self._updater.counts()
        return Recall(tuple(items), self._render(items), info)

    def _select(self, query: Query) -> tuple[list[MemoryItem], dict[str, Any]]:
        return list(self._items), {}

    def _render(self, items: list[MemoryItem]) -> str:
        blocks: dict[int, list[str]] = {}
        for item in items:
            blocks.setdefault(int(item.attrs.get("session", 0)), []).append(item.text)
        return "\n".join(
            f"Session {index}:\n" + "\n".join(lines) for index, lines in sorted(blocks.items())
        )

    def snapshot(self) -> list[MemoryItem]:
        """Return the memory sentences in the store."""
        return list(self._items)
