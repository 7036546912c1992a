"""Top-k retrieval of memory items by cosine similarity with a query text."""

from __future__ import annotations

from recallbench.embed.base import TextEmbedder
from recallbench.embed.index import topk
from recallbench.records import MemoryItem


def top_k(
    embedder: TextEmbedder, items: list[MemoryItem], text: str, k: int | None
) -> tuple[list[MemoryItem], list[float]]:
    """Return the ``k`` items most cosine-similar to ``text`` (all when ``k`` is None), best first.

    Ties go to the earlier item in the store (``embed.topk``), so results are deterministic.
    """
    if not items:
        return [], []
    matrix = embedder.encode([item.text for item in items])
    query = embedder.encode([text])[0]
    order, scores = topk(query, matrix, len(items) if k is None else k)
    return [items[int(i)] for i in order], [round(float(s), 6) for s in scores]
