"""Optional abilities of a memory method, each a small ``runtime_checkable`` Protocol.

A protocol that can use an ability asks with ``isinstance(method, HasRetention)`` instead of
probing a name: the type checker then sees the method's signature, and a method offers the
ability by defining the method (no base class or registration needed).

- ``HasRetention``: cumulative created / currently retained memories (LUFY Table 3; the ``qa``
  protocol records them after every session).
- ``HasAnswerPromptFields``: the fields the QA answer prompt shows instead of ``recall.text``
  (LUFY gives its Key Summary and Relevant Memory, as its chatbot sees them).
- ``HasUpdater``: a memory updater (Bae et al.'s Algorithm 1 + classifier), or None when memory
  only accumulates (the ``memory_ops`` protocol classifies with it).
- ``HasQueryEmbedder``: an embedder and the turns of a query it embeds (``query_text``);
  ``MemoryMethod.prefetch`` encodes a session's queries in one batch with them.
- ``HasEmbedder``: an embedder; ``MemoryMethod.prefetch_episode`` encodes the texts of
  ``prefetch_texts`` with it in one call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from recallbench.records import Query, Recall

if TYPE_CHECKING:  # keeps ``import recallbench.memory`` light
    from recallbench.embed.base import TextEmbedder
    from recallbench.memory.blocks.bae_update import MemoryUpdater


@runtime_checkable
class HasRetention(Protocol):
    """A method that counts the memories it created and still retains."""

    def retention(self) -> dict[str, int]:
        """Return ``{"created": n, "retained": m}`` (cumulative, profile excluded)."""
        ...


@runtime_checkable
class HasAnswerPromptFields(Protocol):
    """A method that fills the QA answer prompt itself."""

    def answer_prompt_fields(self, query: Query, recall: Recall) -> dict[str, str]:
        """Return the prompt fields (at least ``memory``) for answering ``query``."""
        ...


@runtime_checkable
class HasUpdater(Protocol):
    """A method whose memory is updated by Bae et al.'s operations (or only accumulates)."""

    @property
    def updater(self) -> MemoryUpdater | None:
        """The memory updater, or None when APPEND is the only operation."""
        ...


@runtime_checkable
class HasQueryEmbedder(Protocol):
    """A method that retrieves by embedding ``query_text(query, context_turns)``."""

    @property
    def embedder(self) -> TextEmbedder | None:
        """The embedder of the retrieval texts (None: none configured)."""
        ...

    @property
    def context_turns(self) -> int | None:
        """The dialogue turns a retrieval text holds (``query_text``)."""
        ...


@runtime_checkable
class HasEmbedder(Protocol):
    """A method that embeds with an embedder (``prefetch_episode`` encodes with it)."""

    @property
    def embedder(self) -> TextEmbedder | None:
        """The method's embedder (None: none configured)."""
        ...
