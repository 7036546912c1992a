"""MemoryBank's forgetting curve as the LUFY paper's baseline.

Papers: Zhong et al., "MemoryBank: Enhancing Large Language Models with Long-Term Memory", AAAI
2024 (the Ebbinghaus-inspired memory updating); as re-implemented in Sumida, Inoue and Kawahara,
"Enhancing Long-term RAG Chatbots with Psychological Models of Memory Importance and Forgetting"
(LUFY), JAIR 2025 / arXiv 2409.12524, sec. 2 (Eq. 1), sec. 4.2 and Tables 3-4.

Implemented: the shared LUFY-family store (``memory/lufy/_store.py``) with MemoryBank's importance
e^(-dt/S): S starts at 1 when a memory is written, and each time it is recalled (retrieved as R1 and
shown to the generator) S += 1 and dt is reset to 0. dt is in days of simulated time (LUFY sessions
are consecutive days). After every session the memories are ranked by importance and the top 10% of
all memories created so far are kept (sec. 4.2, Table 3 rounding: nearest whole number, halves up).
Retrieval is by cosine similarity only (Table 4).

``upstream_formula: true`` uses the released MemoryBank code instead:
``math.exp(-t / 5*S)`` (``memory_bank/memory_retrieval/forget_memory.py`` in
zhongwanjun/MemoryBank-SiliconFriend), which Python evaluates as exp(-(t/5)*S): the time scale is
5 days and a memory recalled more often decays FASTER, the opposite of the paper and of the
code's own docstring (an open upstream issue). Default off; ``conf/memory/memorybank_upstream``.

Deviations:
- MemoryBank deletes memories at random with probability 1 - importance; LUFY's baseline (and
  this one) keeps the top 10% by importance, deterministically.
- Those of ``memory/lufy/_store.py`` (live writes, tie-break toward newer memories, our prompts).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from recallbench.embed.base import TextEmbedder
from recallbench.llm.protocol import LLMClient
from recallbench.memory.lufy import Entry, LufyFamilyMemory, ebbinghaus


class MemoryBank(LufyFamilyMemory):
    """Ebbinghaus importance from recall count and recency; keep the top 10% after each session.

    Args:
        llm, embedder: see ``LufyFamilyMemory``.
        upstream_formula: use MemoryBank's released exp(-t / 5*S) instead of e^(-t/S).
        **params: ``LufyFamilyMemory`` options (threshold, retain_ratio, ...).
    """

    name = "memorybank"
    forgets = True

    def __init__(
        self,
        llm: LLMClient,
        embedder: TextEmbedder,
        *,
        upstream_formula: bool = False,
        **params: Any,
    ) -> None:
        super().__init__(llm, embedder, **params)
        self.upstream_formula = bool(upstream_formula)

    def importance(self, entry: Entry, now: datetime) -> float:
        """Return e^(-dt/S), or exp(-(dt/5)*S) with ``upstream_formula``."""
        dt = self.dt_days(entry, now)
        return ebbinghaus(dt, self.strength(entry), upstream=self.upstream_formula)
