"""Per-session memory summaries: each finished session becomes a few memory sentences.

The method (``memory=session_summaries``, ``conf/memory/session_summaries.yaml``) is in
``_session_summaries``.
"""

from recallbench.memory.session_summaries._session_summaries import SessionSummaries

__all__ = [
    "SessionSummaries",
]
