"""Embedders (MiniLM offline, OpenAI, hashing for tests) and vector top-k search.

```python
from recallbench.embed import MiniLMEmbedder, topk
emb = MiniLMEmbedder()
vecs = emb.encode(["hello", "hi"])   # (2, 384) float32, unit rows, cached per text
idx, scores = topk(vecs[0], vecs, k=1)
```
Configs: ``conf/embedder/{minilm,hashing,openai_3_small,openai_ada_002}.yaml``, each naming its
class with ``_target_``; a run builds them in ``recallbench.cli.build``.
"""

from __future__ import annotations

from recallbench.embed.base import CacheInfo, Embedder, TextEmbedder, l2_normalize
from recallbench.embed.cache import EmbeddingCache
from recallbench.embed.hashing import HashingEmbedder
from recallbench.embed.index import VectorIndex, topk
from recallbench.embed.minilm import MiniLMEmbedder, minilm_path
from recallbench.embed.openai_embed import OpenAIEmbedder

__all__ = [
    "CacheInfo",
    "Embedder",
    "EmbeddingCache",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "OpenAIEmbedder",
    "TextEmbedder",
    "VectorIndex",
    "l2_normalize",
    "minilm_path",
    "topk",
]
