"""Naive RAG: the LUFY paper's baseline without forgetting (cosine retrieval only).

Paper: Sumida, Inoue and Kawahara, "Enhancing Long-term RAG Chatbots with Psychological Models of
Memory Importance and Forgetting" (LUFY), JAIR 2025 / arXiv 2409.12524, sec. 5 and Table 4:
"a conventional RAG chatbot model that exhibits no forgetting", retrieval by cosine similarity.

Implemented: the shared LUFY-family store (``memory/lufy/_store.py``: profile, session summaries,
utterance pairs; cosine threshold 0.8; top-2 retrieval with R1 shown) with forgetting switched off,
so ``retention()`` is always 100% (Table 3). Snapshot attrs report MemoryBank-style bookkeeping
(S = 1 + R1, e^(-dt/S)) for comparison only; it never affects retrieval.

Deviations:
- Those of ``memory/lufy/_store.py`` (live writes, our summary/profile prompts, configured
  embedder instead of text-embedding-ada-002).
"""

from __future__ import annotations

from typing import Any

from recallbench.embed.base import TextEmbedder
from recallbench.llm.protocol import LLMClient
from recallbench.memory.lufy import LufyFamilyMemory


class NaiveRAG(LufyFamilyMemory):
    """Store everything, retrieve by cosine similarity, never forget.

    Args:
        llm, embedder: see ``LufyFamilyMemory``.
        **params: ``LufyFamilyMemory`` options (``forgetting`` is forced off).
    """

    name = "naive_rag"
    forgets = False

    def __init__(self, llm: LLMClient, embedder: TextEmbedder, **params: Any) -> None:
        params["forgetting"] = False
        super().__init__(llm, embedder, **params)
