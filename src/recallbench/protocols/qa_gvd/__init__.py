"""Protocol ``qa_gvd``: the QA protocol on GVD with CAIM's four metrics (CAIM sec. 4.1.3-4.1.4).

The protocol is in ``_qa_gvd``; ``scores``: CAIM's retrieval accuracy, response correctness,
coherence and memory storage, and the rescoring of a finished run.
"""

from recallbench.protocols.qa_gvd._qa_gvd import GVDQAProtocol

__all__ = [
    "GVDQAProtocol",
]
