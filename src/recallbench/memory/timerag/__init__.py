"""TimeRAG-Memory (Sun, Lu and Chen, JACS 2023, DOI 10.69987/JACS.2023.30802), sections 3.1-3.5.

Confidence-gated writing of structured records (Table II) from each session's user utterances,
time-aware retrieval ``score = sim * exp(-lambda * dt) - gamma * conflict`` over the active
records, update/forget (overwrite or down-weight on slot conflict, decay to ``decayed``, explicit
deletion with provenance, a per-user budget), and the paper's generation prompt (sec. 3.5).
Defaults are the paper's (sec. 4: tau 0.55, lambda 0.25, K = 5, budget 40 records per user).

Deviations (each a config value, ``conf/memory/timerag.yaml``):
- Templates, their reliabilities and the topic lexicon of the rule writer are this project's
  (``_writer``); the paper describes them only as "high-precision templates + canonicalization".
- Confidence = reliability + 0.15 per earlier sighting - 0.1 when a more confident active record
  of the slot disagrees (``repetition_bonus``, ``contradiction_penalty``); the paper names the
  three signals but no formula.
- gamma = 0.5 and the decay threshold 0.05 are not given in the paper.
- dt is measured in days of the simulated clock (``recallbench.clock``; ``dt_unit: sessions``
  counts sessions instead, and is used when a dataset has no timestamps).
- MSC and Persona-Chat have two users: records belong to a speaker (budget per speaker), and a
  rendered memory line names it: ``- [slot] speaker: value (time=t)``; a ``-`` after the slot
  marks negative polarity (``- [preference.food -] Speaker 1: peanuts (time=...)``).
- "w/o Recency Filter" (Table VIII) is read as: decayed records stay retrievable (still weighted
  by time); the paper does not define the filter beyond "metadata filtering".
- The lexical retriever is BM25 (rank-bm25) with scores divided by the query's best score, so
  ``sim`` lies in [0, 1] like the dense cosine.
"""

from recallbench.memory.timerag._timerag import SYSTEM, USER, TimeRAG

__all__ = ["SYSTEM", "USER", "TimeRAG"]
