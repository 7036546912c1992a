"""Full dialogue history: every past session's dialogue, truncated from the front to fit.

The method (``memory=full_history``, ``conf/memory/full_history.yaml``) is in ``_full_history``.
"""

from recallbench.memory.full_history._full_history import FullHistory

__all__ = [
    "FullHistory",
]
