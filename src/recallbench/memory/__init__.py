"""Memory methods: one module or package per method, each a CLI choice with a config of the
same stem (``memory=theanine`` <-> ``conf/memory/theanine.yaml`` <-> ``memory/theanine/``).

Shared building blocks are ``_``-prefixed modules (``_base``: the contract; ``_common``,
``_llm_common``: baseline helpers; ``_update``: Bae et al.'s Algorithm 1; ``_abilities``: the
optional abilities a protocol may use, as ``runtime_checkable`` Protocols). The public contract
a protocol or a new method needs is re-exported here.
"""

from recallbench.memory._abilities import HasAnswerPromptFields, HasRetention, HasUpdater
from recallbench.memory._base import MemoryMethod, Message, render_history, strip_speaker

__all__ = [
    "HasAnswerPromptFields",
    "HasRetention",
    "HasUpdater",
    "MemoryMethod",
    "Message",
    "render_history",
    "strip_speaker",
]
