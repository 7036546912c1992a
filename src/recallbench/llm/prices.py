"""Price table: USD per 1M input / output tokens, per model id.

Source: the OpenAI API pricing page (https://openai.com/api/pricing/ and the per-model pages),
as known to the authors on PRICES_AS_OF. Verify before quoting: prices change, and batch /
cached-input discounts are not modelled. Local models (the ``extractive`` backend, any ``hf``
model) cost 0. A model missing from the table has no price: ``cost`` returns None and usage
flags the call (``cost_unknown_calls``), never a silent 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

PRICES_AS_OF = "2024-10-01"
PRICES_SOURCE = (
    "OpenAI API pricing page (openai.com/api/pricing) as known to the authors on "
    f"{PRICES_AS_OF}; verify before quoting"
)


@dataclass(frozen=True)
class Price:
    """USD per 1M input (prompt) and output (completion) tokens."""

    input_per_1m: float
    output_per_1m: float


OPENAI_PRICES: dict[str, Price] = {
    "gpt-3.5-turbo": Price(0.50, 1.50),  # alias of -0125 since Feb 2024
    "gpt-3.5-turbo-0125": Price(0.50, 1.50),
    "gpt-3.5-turbo-1106": Price(1.00, 2.00),
    "gpt-4o": Price(2.50, 10.00),  # alias of gpt-4o-2024-08-06 since Oct 2024
    "gpt-4o-2024-08-06": Price(2.50, 10.00),
    "gpt-4o-2024-05-13": Price(5.00, 15.00),
    "gpt-4o-mini": Price(0.15, 0.60),
    "gpt-4o-mini-2024-07-18": Price(0.15, 0.60),
    "gpt-4-turbo": Price(10.00, 30.00),
    "gpt-4-turbo-2024-04-09": Price(10.00, 30.00),
    "gpt-4": Price(30.00, 60.00),
    "gpt-4-0613": Price(30.00, 60.00),
    "text-embedding-3-small": Price(0.02, 0.0),
    "text-embedding-3-large": Price(0.13, 0.0),
    "text-embedding-ada-002": Price(0.10, 0.0),
}

LOCAL_PRICES: dict[str, Price] = {
    "extractive": Price(0.0, 0.0),
    "smollm2-135m-instruct": Price(0.0, 0.0),
    "all-minilm-l6-v2": Price(0.0, 0.0),
}


class PriceTable:
    """Look up prices by model id and turn token counts into USD.

    Args:
        extra: more (or overriding) prices, e.g. ``{"my-vllm-model": Price(0, 0)}``.
    """

    def __init__(self, extra: Mapping[str, Price] | None = None) -> None:
        self.prices: dict[str, Price] = {**OPENAI_PRICES, **LOCAL_PRICES, **dict(extra or {})}
        self.source = PRICES_SOURCE

    def price(self, model: str) -> Price | None:
        """Return the price of ``model`` or None when unknown."""
        return self.prices.get(model)

    def cost(
        self, model: str, prompt_tokens: int, completion_tokens: int, *, local: bool = False
    ) -> float | None:
        """Return the USD cost of one call; 0 for local models, None when the price is unknown."""
        if local:
            return 0.0
        price = self.price(model)
        if price is None:
            return None
        return (prompt_tokens * price.input_per_1m + completion_tokens * price.output_per_1m) / 1e6
