"""Naive RAG: the LUFY paper's baseline without forgetting (cosine retrieval only).

The method (``memory=naive_rag``, ``conf/memory/naive_rag.yaml``) is in ``_naive_rag``.
"""

from recallbench.memory.naive_rag._naive_rag import NaiveRAG

__all__ = [
    "NaiveRAG",
]
