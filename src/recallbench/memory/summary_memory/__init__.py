"""Summary-Memory, TimeRAG-Memory's baseline (Sun et al. 2023, Table III): "maintain a running
summary/persona string and always include it".

The method (``memory=summary_memory``, ``conf/memory/summary_memory.yaml``) is in
``_summary_memory``.
"""

from recallbench.memory.summary_memory._summary_memory import SummaryMemory

__all__ = [
    "SummaryMemory",
]
