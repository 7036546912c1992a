"""Gold memory: the dataset's own memory for each session (an upper bound).

The method (``memory=gold_memory``, ``conf/memory/gold_memory.yaml``) is in ``_gold_memory``.
"""

from recallbench.memory.gold_memory._gold_memory import GoldMemory

__all__ = [
    "GoldMemory",
]
