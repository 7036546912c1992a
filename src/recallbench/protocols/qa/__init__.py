"""Protocol ``qa``: probing questions after every session, judged 1 / 0 / 2 (LUFY sec. 5.4).

The protocol is in ``_qa``; ``_ask``: a question's recall and prompt fields (``locomo_qa``
asks with them too); ``scores``: LUFY's precision/recall/F1 and retention.
"""

from recallbench.protocols.qa._ask import NO_MEMORY_TEXT, Asked, Probe, ask_fields
from recallbench.protocols.qa._qa import DONT_KNOW_ANSWER, QAProtocol, offline_answer

__all__ = [
    "NO_MEMORY_TEXT",
    "Asked",
    "Probe",
    "ask_fields",
    "DONT_KNOW_ANSWER",
    "QAProtocol",
    "offline_answer",
]
