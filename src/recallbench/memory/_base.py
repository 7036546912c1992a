"""The MemoryMethod contract (docs/extending.md, "A memory method").

A memory method is reset at the start of every episode, observes each finished session, and
recalls for a ``Query`` that carries only the past. It never sees references, answers or future
sessions. ``snapshot`` returns the store, dumped by the runner after every session.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import cast

from recallbench.llm.types import Message
from recallbench.memory._abilities import HasEmbedder, HasQueryEmbedder
from recallbench.records import Episode, MemoryItem, Query, Recall, Session, Turn
from recallbench.text import content_words

# THEANINE Fig. 24 is the default response prompt of the THEANINE baselines; methods override
# ``prompt`` with their own paper template.


def strip_speaker(line: str, speakers: tuple[str, ...] | list[str]) -> str:
    """Drop a leading ``speaker:`` tag of one of ``speakers`` from ``line``."""
    for speaker in speakers:
        if line.startswith(f"{speaker}:"):
            return line[len(speaker) + 1 :].strip()
    return line.strip()


def render_history(turns: tuple[Turn, ...] | list[Turn]) -> str:
    """Render dialogue turns as ``speaker: text`` lines."""
    return "\n".join(f"{t.speaker}: {t.text}" for t in turns)


def query_text(query: Query, context_turns: int) -> str:
    """Return the retrieval query: the question if any, else the text of the last
    ``context_turns`` turns (all when <= 0) without speaker tags, which would otherwise match
    every memory that names the same speaker."""
    if query.question:
        return query.question
    turns = query.history[-context_turns:] if context_turns > 0 else query.history
    return "\n".join(t.text for t in turns)


def prefetch_queries(method: MemoryMethod, queries: Sequence[Query]) -> None:
    """Encode ``method.query_texts(queries)`` in one call of its embedder (each text once)."""
    texts = list(dict.fromkeys(t for t in method.query_texts(queries) if t.strip()))
    if texts and isinstance(method, HasEmbedder) and method.embedder is not None:
        method.embedder.encode(texts)


class MemoryMethod(ABC):
    """Base class of every memory method. Subclasses keep all state in instance attributes."""

    name: str = "memory"
    episode_id: str | None = None  # set by ``reset``; None: not reset yet
    speakers: tuple[str, ...] = ()

    def reset(self, episode: Episode) -> None:
        """Start a new episode: drop every piece of state. Keep the episode's static meta only."""
        self.episode_id = episode.episode_id
        self.speakers = episode.speakers
        self._meta = dict(episode.meta)

    def check_episode(self, query: Query | None = None) -> None:
        """Refuse use before ``reset`` and queries that belong to another episode."""
        current = self.episode_id
        if current is None:
            raise RuntimeError(f"{type(self).__name__}: call reset(episode) before use")
        if query is not None and query.episode_id != current:
            raise RuntimeError(
                f"{type(self).__name__}: query for episode {query.episode_id!r} but the method "
                f"was reset for {current!r}"
            )

    def needs(self) -> frozenset[str]:
        """The facts about the data this method needs beyond dialogue turns (default: none).

        Words of ``recallbench.datasets.needs`` (``dated sessions``, ``gold memory`` ...): the
        cross-paper matrix marks a dataset that does not provide them unavailable for the method,
        with the missing facts as the reason, instead of running it into an error.
        """
        return frozenset()

    @abstractmethod
    def observe(self, session: Session) -> None:
        """Take in a finished session: summarize, write, link, update, forget."""

    def prefetch_texts(self, episode: Episode) -> Sequence[str]:
        """The texts replaying ``episode`` will embed that its data already fixes (default: none).

        A method whose embedded strings are built from the episode's turns alone (rounds, keys,
        utterance pairs, rule-extracted values) returns them here, before any session is
        observed; ``prefetch_episode`` encodes them in one call. It may return a superset (a
        text its gate later drops), never a text it would not form from this episode's data.
        """
        return ()

    def prefetch_episode(self, episode: Episode) -> None:
        """Prepare for replaying ``episode``; the protocols call it right after ``reset``.

        A method whose model work the episode's data already fixes (embedding every turn pair it
        will write, scoring every utterance) does it here in one call, so the calls made session
        by session find their results in the embedder's or the LM-score cache: one large
        length-sorted batch pads far less than many small ones (LUFY's logs: 45% of the padded
        tokens were real in per-session batches), and the per-call cost (a forward pass, the
        cache lookups) is paid once. Default: the texts of ``prefetch_texts``, each once, in one
        ``encode`` of the method's embedder (``HasEmbedder``). It never changes what the method
        computes beyond the floating-point noise of batching.
        """
        if not isinstance(self, HasEmbedder) or self.embedder is None:
            return
        texts = [t for t in dict.fromkeys(self.prefetch_texts(episode)) if t.strip()]
        if texts:
            self.embedder.encode(texts)

    def query_texts(self, queries: Sequence[Query]) -> Sequence[str]:
        """The texts ``recall`` will embed for ``queries`` that the queries alone fix, whatever
        the method's state (default: a ``HasQueryEmbedder`` method's retrieval text
        ``query_text`` of each; none for other methods). A method whose embedder never sees its
        retrieval text (an LLM or BM25 selects) returns none."""
        if not isinstance(self, HasQueryEmbedder) or self.embedder is None:
            return ()
        turns = self.context_turns
        return [query_text(q, turns) for q in queries] if isinstance(turns, int) else ()

    def prefetch(self, queries: Sequence[Query]) -> None:
        """Prepare for ``queries``, which ``recall`` will then get one by one in this order.

        The response protocol calls it with the queries of a target session before recalling
        them. Default: the texts of ``query_texts`` in one batch, so each recall finds its
        query vector in the embedder's cache instead of a forward pass of its own. It never
        changes what a recall returns beyond the floating-point noise of batching.
        """
        prefetch_queries(self, queries)

    @abstractmethod
    def recall(self, query: Query) -> Recall:
        """Return what the generator should see for ``query`` (may update counters)."""

    @abstractmethod
    def prompt(self, query: Query, recall: Recall) -> list[Message]:
        """Return the method's response prompt as chat messages.

        An LLM generator (``openai``, ``hf``) answers these messages. The ``extractive``
        generator never reads them: it replies with ``offline_response(query, recall)`` (its
        prompt is still rendered, hashed and counted in tokens). So, offline, two methods that
        recall the same items score the same whatever their prompts, and a method whose items
        hold raw turns can beat one that stores summaries on ROUGE/BLEU just by copying a real
        utterance: compare prompts with an LLM generator.
        """

    @abstractmethod
    def snapshot(self) -> list[MemoryItem]:
        """Return the current store."""

    def offline_lines(self, recall: Recall) -> list[str]:
        """The lines the offline reply may copy: every line of every recalled item's text.

        A method whose prompt shows its memory in another form than the items (THEANINE's
        refined timelines) returns the units of that rendering instead.
        """
        return [line for item in recall.items for line in item.text.splitlines()]

    def offline_response(self, query: Query, recall: Recall) -> str:
        """Return a deterministic reply without an LLM (the ``extractive`` backend's response).

        The recalled line (``offline_lines``, speaker tag removed) sharing the most content words
        with the last turn, ties to the earliest; if none shares a word, a generic follow-up
        built from the last turn's longest content word. A documented no-LLM baseline: it reads
        the recall only (``offline_lines``), never ``prompt``'s messages (see ``prompt``).
        Override it to give a method its own offline behaviour.
        """
        if not query.history:
            return "Hello! How have you been?"
        last = set(content_words(query.history[-1].text))
        speakers = tuple(self.speakers)
        best, best_overlap = "", 0
        for line in self.offline_lines(recall):
            line = strip_speaker(line.strip(), speakers)
            overlap = len(last & set(content_words(line)))
            if overlap > best_overlap:
                best, best_overlap = line, overlap
        if best:
            return best
        topic = max(content_words(query.history[-1].text), key=len, default="")
        return f"I see. Tell me more about {topic}." if topic else "I see. Tell me more."


class MethodFactory:
    """Builds a fresh method per episode (``build()``) and names its class without building one,
    so the runner can ask whether the class fixes texts to embed (``run.prefetch``)."""

    def __init__(self, method_class: type[MemoryMethod], build: Callable[[], MemoryMethod]) -> None:
        self.method_class, self.build = method_class, build

    def __call__(self) -> MemoryMethod:
        return self.build()

    @classmethod
    def named(cls, target: object, build: Callable[[], object]) -> Callable[[], MemoryMethod]:
        """``build`` (it instantiates ``target``) as a factory naming ``target``'s class when
        that is a ``MemoryMethod``, else as is (a bad target is reported when it builds)."""
        made = cast("Callable[[], MemoryMethod]", build)
        module, _, name = str(target).rpartition(".")
        try:
            found = vars(importlib.import_module(module)).get(name) if module else None
        except ImportError:
            return made
        if isinstance(found, type) and issubclass(found, MemoryMethod):
            return cls(found, made)
        return made
