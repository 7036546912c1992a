"""OpenAI embeddings (text-embedding-3-small, text-embedding-ada-002) via the official client.

Works against api.openai.com or any OpenAI-compatible ``base_url`` (vLLM, llama.cpp server,
Ollama). The API key is read only from the environment variable named in the config, never from
the config itself. Retries are the client's own (``max_retries``, honours Retry-After).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from recallbench.embed.base import Embedder
from recallbench.errors import ConfigError

# Output sizes of the models the papers use (THEANINE: text-embedding-3-small).
KNOWN_DIMS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
MAX_INPUTS_PER_REQUEST = 2048  # API limit on the length of ``input``


class OpenAIEmbedder(Embedder):
    """Embeddings from an OpenAI-compatible ``/v1/embeddings`` endpoint.

    Args:
        model: embedding model id.
        api_key_env: name of the environment variable holding the API key.
        base_url: API root (``None``: the client's default, api.openai.com).
        dimensions: requested output size (text-embedding-3 models only); default: full size.
        dim: output size for models not in ``KNOWN_DIMS`` (e.g. a local server's model).
        batch_size: texts per request (at most 2048).
        timeout_s, max_retries: passed to the ``openai`` client.
        cache_path: optional SQLite cache file (recommended: embeddings cost money).
    """

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        *,
        api_key_env: str = "OPENAI_API_KEY",
        base_url: str | None = None,
        dimensions: int | None = None,
        dim: int | None = None,
        batch_size: int = 256,
        timeout_s: float = 60.0,
        max_retries: int = 2,
        cache_path: str | Path | None = None,
    ) -> None:
        if not 1 <= batch_size <= MAX_INPUTS_PER_REQUEST:
            raise ConfigError(f"embedder batch_size must be in 1..2048, got {batch_size}")
        api_key = os.environ.get(api_key_env)
        if not api_key:
            raise ConfigError(
                f"embedder {model!r}: environment variable {api_key_env!r} is not set "
                "(the API key is read only from the variable named by api_key_env)"
            )
        self.model = model
        self.dimensions = dimensions
        self.dim = dimensions or dim or KNOWN_DIMS.get(model, 0)
        if not self.dim:
            raise ConfigError(
                f"embedder {model!r}: unknown output size; set dim (known: {sorted(KNOWN_DIMS)})"
            )
        self.name = model if dimensions is None else f"{model}@{dimensions}"
        self.base_url = base_url
        from openai import OpenAI

        self._client = OpenAI(
            api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=max_retries
        )
        super().__init__(batch_size=batch_size, cache_path=cache_path)

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        from openai import omit

        response = self._client.embeddings.create(
            model=self.model,
            input=texts,
            encoding_format="float",
            dimensions=omit if self.dimensions is None else self.dimensions,
        )
        rows = sorted(response.data, key=lambda d: d.index)
        if [d.index for d in rows] != list(range(len(texts))):
            raise ValueError(
                f"{self.base_url or 'api.openai.com'} /embeddings: expected indices "
                f"0..{len(texts) - 1}, got {[d.index for d in rows]}"
            )
        return np.asarray([d.embedding for d in rows], dtype=np.float32)
