"""An embedder for tests that records what reaches the model.

``RecordingEmbedder`` is the offline hashing embedder with a log of every call to the model
(``_embed_batch``, so only the texts its caches missed): tests of prefetching and batching
assert how many calls an episode makes and which texts they carry. One class for the tests
that used to define their own copy. ``Overlap`` is a slow model call that counts how many run at
once (tests of what must run one at a time, and of how its waits are timed).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

import numpy as np

from recallbench.embed import HashingEmbedder


class RecordingEmbedder(HashingEmbedder):
    """The hashing embedder, recording each call that reached the model (``calls``, in order)."""

    def __init__(self, dim: int = 64) -> None:
        super().__init__(dim=dim)
        self.calls: list[list[str]] = []

    @property
    def sent(self) -> list[str]:
        """Every text the model computed, in the order of the calls."""
        return [text for call in self.calls for text in call]

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return super()._embed_batch(texts)


class Overlap:
    """A model call of ``seconds`` that records the most calls inside it at once (``most``)."""

    def __init__(self, seconds: float = 0.03) -> None:
        self.seconds, self.inside, self.most = seconds, 0, 0
        self._count = threading.Lock()

    @contextlib.contextmanager
    def call(self) -> Iterator[None]:
        """Hold the call ``seconds`` long, counted as inside meanwhile."""
        with self._count:
            self.inside += 1
            self.most = max(self.most, self.inside)
        time.sleep(self.seconds)
        try:
            yield
        finally:
            with self._count:
                self.inside -= 1
