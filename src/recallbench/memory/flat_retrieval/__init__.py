"""Flat retrieval: LongMemEval's memory design axes (value granularity, fact-expanded keys,
time-aware query expansion) as one configurable index.

The method (``memory=flat_retrieval``, ``conf/memory/flat_retrieval*.yaml``) is in ``_flat``.
"""

from recallbench.memory.flat_retrieval._flat_retrieval import (
    FlatRetrieval,
    render_history,
    time_range,
    user_facts,
)

__all__ = ["FlatRetrieval", "render_history", "time_range", "user_facts"]
