"""Protocol ``qa``: probing questions after every session, judged 1 / 0 / 2 (LUFY sec. 5.4).

The protocol is in ``_qa``; ``scores``: LUFY's precision/recall/F1 and retention.
"""

from recallbench.protocols.qa._qa import DONT_KNOW_ANSWER, QAProtocol, offline_answer

__all__ = [
    "DONT_KNOW_ANSWER",
    "QAProtocol",
    "offline_answer",
]
