"""Protocol ``memory_ops``: Bae et al.'s memory-operation evaluation (Keep Me Updated!, sec. 5.1).

The protocol is in ``_memory_ops``; ``scores``: operation accuracy and set-level F1.
"""

from recallbench.protocols.memory_ops._memory_ops import MemoryOpsProtocol, derived_operation

__all__ = [
    "MemoryOpsProtocol",
    "derived_operation",
]
