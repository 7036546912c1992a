"""Protocol ``timerag``: TimeRAG-Memory's dialogue evaluation (Sun et al. 2023, sec. 4, 5; Tables
IV, V, VI, VIII, IX, XI; Fig. 4).

The protocol is in ``_timerag``; ``scores``: memory writing P/R/F1, retrieval recall@k/MRR, persona
consistency.
"""

from recallbench.protocols.timerag._timerag import (
    TimeRAGProtocol,
    known_before,
    reply_targets,
    split_single,
)

__all__ = [
    "TimeRAGProtocol",
    "known_before",
    "reply_targets",
    "split_single",
]
