"""The no-LLM backend: ``LLM`` answers every task with its deterministic offline implementation."""

from __future__ import annotations

from recallbench.llm.backends.gguf import local_token_counter


class ExtractiveBackend:
    """No LLM: ``LLM`` answers every task with its deterministic offline implementation.

    Token counts are local estimates of the prompt and reply (what a model would have read and
    written), so a no-LLM run still sizes its prompts; the cost is 0.
    """

    name = "extractive"
    endpoint = None
    local = True
    offline = True
    is_async = False

    def __init__(self, model: str = "extractive", context_length: int = 16385) -> None:
        self.model = model
        self.context_length = context_length

    def count_tokens(self, text: str) -> int:
        return local_token_counter()(text)

    def close(self) -> None:
        pass

    def __repr__(self) -> str:
        return f"ExtractiveBackend(context_length={self.context_length})"
