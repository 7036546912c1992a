"""MemoChat (Lu et al. 2023), a THEANINE baseline: topic memos, LLM memo selection, memo-grounded
responses.

``memory=memochat`` <-> ``conf/memory/memochat.yaml`` <-> :class:`MemoChat`. Helpers: ``_memochat``
(prompts and the method), ``_memos`` (the memo JSON and its reply shape, the parser and the offline
implementations).
"""

from recallbench.memory.memochat._memochat import (
    MEMO_RESPONSE_PROMPT,
    MEMO_SELECT_PROMPT,
    MEMO_WRITE_PROMPT,
    MemoChat,
)
from recallbench.memory.memochat._memos import (
    MEMOS_REPLY,
    MemoList,
    number_lines,
    offline_memos,
    offline_select,
    parse_memos,
)

__all__ = [
    "MEMOS_REPLY",
    "MEMO_RESPONSE_PROMPT",
    "MEMO_SELECT_PROMPT",
    "MEMO_WRITE_PROMPT",
    "MemoChat",
    "MemoList",
    "number_lines",
    "offline_memos",
    "offline_select",
    "parse_memos",
]
