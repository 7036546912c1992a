"""Protocol ``lamp1``: LaMP-1 with memory-built profiles (TimeRAG-Memory sec. 5.2, Table VII).

The protocol is in ``_lamp1``.
"""

from recallbench.protocols.lamp1._lamp1 import LaMP1Protocol, cross_fit, features, macro_f1

__all__ = [
    "LaMP1Protocol",
    "cross_fit",
    "features",
    "macro_f1",
]
