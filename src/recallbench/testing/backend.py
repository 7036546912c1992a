"""``ReplyBackend``: the base of the scripted backends tests put behind the real ``LLM`` facade.

It takes the defaults of ``recallbench.llm.types.BackendBase`` (a local synchronous model), so a
test double only says how it answers (``complete``) and, if it differs, its name and context.
"""

from __future__ import annotations

from recallbench.llm.types import BackendBase, Completion, Decoding, Message


class ReplyBackend(BackendBase):
    """A local, synchronous backend with no server; subclasses implement ``complete``."""

    name = "script"
    model = "s"
    context_length = 9999

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def complete(self, messages: list[Message], dec: Decoding) -> Completion:
        raise NotImplementedError(f"{type(self).__name__} gives no replies: define complete")
