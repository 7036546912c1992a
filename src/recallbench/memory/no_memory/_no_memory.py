"""No memory: the generator sees the current session only.

Paper: Bae et al., "Keep Me Updated! Memory Management in Long-term Conversations", Findings of
EMNLP 2022, sec. 5.2 "Without memory": "The input at inference is current dialogue history D_t
only."

Implemented: ``observe`` stores nothing (it only records which turns were seen); ``recall``
returns an empty Recall; ``prompt`` is THEANINE Fig. 24 with an empty memory ("(none)") or the
CareCall continuation prompt without a memory block.

Deviations:
- Bae et al. fine-tune HyperCLOVA on D_t; we prompt the configured generator.
"""

from __future__ import annotations

from recallbench.memory.blocks.baseline import BaselineMethod
from recallbench.records import MemoryItem, Query, Recall


class NoMemory(BaselineMethod):
    """The current session only (Bae et al. 2022 "Without memory")."""

    def recall(self, query: Query) -> Recall:
        """Return nothing to remember."""
        self.check_episode(query)
        return Recall((), "", {"method": "NoMemory"})

    def snapshot(self) -> list[MemoryItem]:
        """Return the (always empty) store."""
        return []
