"""The protocol contract: ``EvalProtocol``, the base class of every evaluation protocol.

A protocol turns an episode plus a memory method into predictions (``run_episode``), and may
score them itself (``score``). The runner drives it in this order::

    protocol.prepare(episodes)                      # once, before any episode (default: nothing)
    for episode in episodes:                        # a fresh memory method per episode
        result = protocol.run_episode(episode, method, llm)
    protocol.run_extra(method, llm)                 # optional: items outside any episode
    protocol.score(predictions, metric_names)       # optional: else the runner's reference metrics

``run_extra`` and ``score`` are optional hooks: a protocol that does not define them gets the
runner's behaviour (no extra items; reference-based metrics over ``Prediction.reference`` per
session). They are looked up by name, so they are not declared here with a default.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from recallbench.records import Episode, MemoryItem, Prediction

if TYPE_CHECKING:
    from recallbench.llm.types import LLMClient
    from recallbench.memory import MemoryMethod


@dataclass
class EpisodeResult:
    """Predictions of one episode and the memory snapshot after each session."""

    predictions: list[Prediction] = field(default_factory=list)
    snapshots: list[tuple[int, list[MemoryItem]]] = field(default_factory=list)


class EvalProtocol(ABC):
    """Base class of the protocols in ``recallbench.protocols`` (see the module docstring).

    Subclasses set ``name`` (the ``name:`` of the ``conf/protocol`` configs whose ``_target_``
    they are) and implement ``run_episode``; the constructor takes the config's keys as keyword
    arguments. ``MODELS`` maps a constructor argument to the config group of the model it is
    (``judge``, ``caim_judge``, ``generator``, ``embedder``): ``cli`` builds it from the nested
    config and passes the object, so no protocol constructs an LLM, judge or embedder itself.
    """

    name: ClassVar[str]
    MODELS: ClassVar[dict[str, str]] = {}

    def prepare(self, episodes: Sequence[Episode]) -> None:  # noqa: B027 (optional hook)
        """Fit anything the protocol needs from the episodes before replay (default: nothing)."""

    @abstractmethod
    def run_episode(self, episode: Episode, method: MemoryMethod, llm: LLMClient) -> EpisodeResult:
        """Replay ``episode`` through ``method`` (reset first) and return its predictions."""
