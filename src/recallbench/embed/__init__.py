"""Embedders (MiniLM offline, OpenAI, hashing for tests) and vector top-k search.

```python
from recallbench.embed import Embedder, build_embedder, topk
emb = build_embedder({"kind": "minilm"})
vecs = emb.encode(["hello", "hi"])   # (2, 384) float32, unit rows, cached per text
idx, scores = topk(vecs[0], vecs, k=1)
```
Configs: ``conf/embedder/{minilm,hashing,openai_3_small,openai_ada_002}.yaml``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recallbench.embed.base import CacheInfo, Embedder, TextEmbedder, l2_normalize
from recallbench.embed.cache import EmbeddingCache
from recallbench.embed.hashing import HashingEmbedder
from recallbench.embed.index import VectorIndex, topk
from recallbench.embed.minilm import MiniLMEmbedder, minilm_path
from recallbench.embed.openai_embed import OpenAIEmbedder
from recallbench.errors import ConfigError, did_you_mean

__all__ = [
    "EMBEDDERS",
    "CacheInfo",
    "Embedder",
    "EmbeddingCache",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "OpenAIEmbedder",
    "TextEmbedder",
    "VectorIndex",
    "build_embedder",
    "l2_normalize",
    "minilm_path",
    "topk",
]

EMBEDDERS: dict[str, type[Embedder]] = {
    "minilm": MiniLMEmbedder,
    "openai": OpenAIEmbedder,
    "hashing": HashingEmbedder,
}


def build_embedder(cfg: Mapping[str, Any]) -> Embedder:
    """Build an embedder from a config mapping (dict or OmegaConf DictConfig).

    ``cfg.kind`` picks the class in ``EMBEDDERS``; every other key is passed to its constructor
    (e.g. ``model``, ``base_url``, ``api_key_env``, ``dim``, ``batch_size``, ``cache_path``).
    """
    params = {str(k): v for k, v in dict(cfg).items() if not str(k).startswith("_")}
    kind = params.pop("kind", None)
    params.pop("scale", None)  # a label: the cosine scale memory configs key cut-offs by
    if kind is None:
        raise ConfigError(f"embedder config has no 'kind' (keys: {sorted(params)})")
    if kind not in EMBEDDERS:
        raise did_you_mean("embedder kind", str(kind), EMBEDDERS)
    cls = EMBEDDERS[kind]
    try:
        return cls(**params)
    except TypeError as exc:
        raise ConfigError(
            f"embedder kind {kind!r}: bad config keys {sorted(params)}: {exc}"
        ) from exc
