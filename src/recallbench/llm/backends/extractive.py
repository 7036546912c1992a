"""The no-LLM backend: ``LLM`` answers every task with its deterministic offline implementation."""

from __future__ import annotations

from recallbench.llm.backends.gguf import local_token_counter
from recallbench.llm.types import BackendBase, Completion, Decoding, Message


class ExtractiveBackend(BackendBase):
    """No LLM: ``LLM`` answers every task with its deterministic offline implementation.

    Token counts are local estimates of the prompt and reply (what a model would have read and
    written), so a no-LLM run still sizes its prompts; the cost is 0.
    """

    name = "extractive"
    offline = True

    def __init__(self, model: str = "extractive", context_length: int = 16385) -> None:
        self.model = model
        self.context_length = context_length

    def count_tokens(self, text: str) -> int:
        return local_token_counter()(text)

    def complete(self, messages: list[Message], dec: Decoding) -> Completion:
        raise NotImplementedError("the extractive backend has no model: LLM answers offline")

    async def acomplete(self, messages: list[Message], dec: Decoding) -> Completion:
        raise NotImplementedError("the extractive backend has no model: LLM answers offline")

    def __repr__(self) -> str:
        return f"ExtractiveBackend(context_length={self.context_length})"
