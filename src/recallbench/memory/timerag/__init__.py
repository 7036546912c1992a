"""TimeRAG-Memory (Sun, Lu and Chen, JACS 2023, DOI 10.69987/JACS.2023.30802), sections 3.1-3.5.

Confidence-gated writing of structured records (Table II) from the user's utterances as the dialogue
streams (sec. 3.2: a recall first writes the turns of its history, so facts of the current session
are retrievable; ``write_during_session: false`` writes a session once it ended), time-aware
retrieval ``score = sim * exp(-lambda * dt) - gamma * conflict`` over the active records,
update/forget (overwrite or down-weight on slot conflict, decay to ``decayed``, explicit deletion
with provenance, a per-user budget), and the paper's generation prompt (sec. 3.5). Defaults are the
paper's (sec. 4: tau 0.55, lambda 0.25, K = 5, budget 40 records per user).

Deviations (each a config value, ``conf/memory/timerag.yaml``): - Templates, their reliabilities and
the topic lexicon of the rule writer are this project's (``_writer``); the paper describes them only
as "high-precision templates + canonicalization". - Confidence = reliability + 0.15 per earlier
sighting - 0.1 when a more confident active record of the slot disagrees (``repetition_bonus``,
``contradiction_penalty``); the paper names the three signals but no formula. - gamma = 0.5 and the
decay threshold 0.05 are not given in the paper. - dt is measured in days of the simulated clock
(``recallbench.clock``; ``dt_unit: sessions`` counts sessions instead, and is used when a dataset
has no timestamps). - MSC and Persona-Chat have two users: records belong to a speaker (budget per
speaker), and a rendered memory line names it: ``- [slot] speaker: value (time=t)``; a ``-`` after
the slot marks negative polarity (``- [preference.food -] Speaker 1: peanuts (time=...)``). - "w/o
Recency Filter" (Table VIII) is read as: decayed records stay retrievable (still weighted by time);
the paper does not define the filter beyond "metadata filtering". - The lexical retriever is BM25
(rank-bm25) with scores divided by the query's best score, so ``sim`` lies in [0, 1] like the dense
cosine. - ``phi(m)`` embeds the record's value (sec. 3.3: "memory values"); ``sim_text: record``
embeds speaker, slot words and value instead (the rendering before issue 24). - ``conflict(m)``
counts any newer version of the slot, whatever its status (``conflict_scope: all``): a newer value
that decayed or was deleted still marks the old one stale; ``eligible`` counts only retrievable
newer records. - The per-user budget's eviction is forgetting, so "w/o Update/Forget" lifts it too
(``budget_with_update_forget: false`` keeps the budget in that ablation). - LaMP-1 (Table VII): the
profile papers are the user's history; the profile writer (``_profile``, ``profile_speakers``)
writes their key phrases as ``background.research`` records (timestamp: the write time). LaMP-1
questions carry no time, so dt is counted in sessions there and is the same for every record (no
time decay acts on LaMP-1).
"""

from recallbench.memory.timerag._timerag import SYSTEM, USER, TimeRAG

__all__ = ["SYSTEM", "USER", "TimeRAG"]
