"""Protocol ``response``: next-utterance generation on target sessions.

The protocol is in ``_response``.
"""

from recallbench.protocols.response._response import (
    EpisodeResult,
    ResponseProtocol,
    prompt_hash,
    render_context,
    uses_memory,
)

__all__ = [
    "EpisodeResult",
    "ResponseProtocol",
    "prompt_hash",
    "render_context",
    "uses_memory",
]
