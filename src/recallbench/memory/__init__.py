"""Memory methods: one package per method, each a CLI choice with a config of the same stem
(``memory=theanine`` <-> ``conf/memory/theanine.yaml`` <-> ``memory/theanine/``).

At this root only the contract: ``_base`` (``MemoryMethod``, the messages and history helpers)
and ``_abilities`` (the optional abilities a protocol may use, as ``runtime_checkable``
Protocols). The parts several methods share are in ``blocks/`` (``blocks/__init__`` lists them;
``blocks.bae_update``: Bae et al.'s Algorithm 1). The public contract a protocol or a new method
needs is re-exported here; ``tests/test_architecture.py`` keeps the layout.
"""

from recallbench.memory._abilities import (
    HasAnswerPromptFields,
    HasEmbedder,
    HasQueryEmbedder,
    HasRetention,
    HasUpdater,
)
from recallbench.memory._base import (
    MemoryMethod,
    Message,
    MethodFactory,
    prefetch_queries,
    render_history,
    strip_speaker,
)
from recallbench.memory.blocks.replay import replay_recalls, reply_queries

__all__ = [
    "HasAnswerPromptFields",
    "HasEmbedder",
    "HasQueryEmbedder",
    "HasRetention",
    "HasUpdater",
    "MemoryMethod",
    "Message",
    "MethodFactory",
    "prefetch_queries",
    "render_history",
    "replay_recalls",
    "reply_queries",
    "strip_speaker",
]
