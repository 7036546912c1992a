"""``ReplyBackend``: the base of the scripted backends tests put behind the real ``LLM`` facade.

It declares every member of ``recallbench.llm.types.Backend`` a local synchronous model has, so a
test double only says how it answers (``complete``) and, if it differs, its name and context.
"""

from __future__ import annotations

from recallbench.llm.types import Completion, Decoding, Message


class ReplyBackend:
    """A local, synchronous backend with no server; subclasses implement ``complete``."""

    name = "script"
    model = "s"
    endpoint: str | None = None
    base_url: str | None = None
    local = True
    offline = False
    is_async = False
    concurrency = 1
    context_length = 9999

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def complete(self, messages: list[Message], dec: Decoding) -> Completion:
        raise NotImplementedError(f"{type(self).__name__} gives no replies: define complete")

    async def acomplete(self, messages: list[Message], dec: Decoding) -> Completion:
        raise NotImplementedError(f"{type(self).__name__} is synchronous: LLM calls complete")

    async def aowner(self) -> str | None:
        return None

    async def aclose(self) -> None:
        pass

    def close(self) -> None:
        pass
