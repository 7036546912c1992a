"""Memory methods: one module or package per method, each a CLI choice with a config of the
same stem (``memory=theanine`` <-> ``conf/memory/theanine.yaml`` <-> ``memory/theanine/``).

Shared building blocks are ``_``-prefixed modules (``_base``: the contract; ``_replay``: the
queries of a logged session, before every reply; ``_baseline``: the classic baselines' common
state; ``_summarize``: per-session summarization; ``_gold``: gold memory sentences and their
source turns; ``_retrieval``: cosine top-k; ``_prompts``: the response prompts;
``_llm_common``: the LLM-driven baselines' helpers; ``_update``: Bae et al.'s Algorithm 1;
``_abilities``: the optional abilities a protocol may use, as ``runtime_checkable``
Protocols). The public contract a protocol or a new method needs is re-exported here.
"""

from recallbench.memory._abilities import HasAnswerPromptFields, HasRetention, HasUpdater
from recallbench.memory._base import MemoryMethod, Message, render_history, strip_speaker
from recallbench.memory._replay import replay_recalls, reply_queries

__all__ = [
    "HasAnswerPromptFields",
    "HasRetention",
    "HasUpdater",
    "MemoryMethod",
    "Message",
    "render_history",
    "replay_recalls",
    "reply_queries",
    "strip_speaker",
]
