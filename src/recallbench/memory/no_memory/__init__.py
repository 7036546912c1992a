"""No memory: the generator sees the current session only.

The method (``memory=no_memory``, ``conf/memory/no_memory.yaml``) is in ``_no_memory``.
"""

from recallbench.memory.no_memory._no_memory import NoMemory

__all__ = [
    "NoMemory",
]
