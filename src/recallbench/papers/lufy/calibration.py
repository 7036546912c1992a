"""Per-embedder calibration of the LUFY-family retrieval threshold and of LUFY's alpha.

LUFY (sec. 4.1.1, App. D) retrieves memories whose cosine with the user's utterance is at least
0.8, a threshold set for text-embedding-ada-002, and ranks them by cos + alpha * importance with
alpha = 0.1 "since cosine similarity values are distributed between 0.8 and 0.9 due to our
threshold". Both numbers belong to ada-002's cosine scale, so the memory configs key them by the
embedder's declared ``scale`` (``conf/memory/_cosine_cut.yaml``): ``_threshold_by_scale`` (the
cut) and ``_cosine_top_by_scale`` (the top of the band of retrieved cosines, the paper's 0.9),
from which LUFY derives alpha (``recallbench.memory.lufy.derive_alpha``).

``cosine_profile`` measures an embedder's scale the way the chatbot meets it: replay LUFY
conversations through Naive RAG with no cut-off and record, before every bot reply, the cosine
of the user's utterance with every stored memory. From it:

- ``retrieval_rate(threshold)``: the share of replies for which anything is retrieved;
- ``band_top(threshold)``: the 95th percentile of the retrieved cosines (the band's top).

A threshold is calibrated when it retrieves for some but not most replies (MiniLM: 0.5 retrieves
for about one reply in four; 0.8 for none) and the declared band top is the measured one. The
test ``tests/memory/test_lufy_calibration.py`` checks every embedder config that runs offline; API
embedders are checked when their key is set (marker ``api``). The command line:

    python scripts/calibrate_cosine.py minilm --data-dir ../shared/data
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from recallbench.embed.base import TextEmbedder
from recallbench.llm.protocol import LLMClient
from recallbench.memory import replay_recalls
from recallbench.records import Episode

RATE_RANGE = (0.1, 0.5)  # a calibrated threshold retrieves for some replies, not most
BAND_QUANTILE = 0.95


@dataclass(frozen=True)
class CosineProfile:
    """Cosines of the user's utterance with every stored memory, one array per bot reply."""

    embedder: str
    queries: tuple[np.ndarray, ...]

    def retrieval_rate(self, threshold: float) -> float:
        """Share of replies whose best stored memory reaches ``threshold``."""
        best = [q.max() for q in self.queries if q.size]
        return float(np.mean([b >= threshold for b in best])) if best else 0.0

    def band_top(self, threshold: float) -> float | None:
        """95th percentile of the retrieved cosines (None: nothing reaches the threshold)."""
        hits = np.concatenate([q[q >= threshold] for q in self.queries] or [np.zeros(0)])
        return float(np.quantile(hits, BAND_QUANTILE)) if hits.size else None

    def best_match_quantiles(self) -> dict[str, float]:
        """Median and 95th percentile of each reply's best cosine."""
        best = np.array([q.max() for q in self.queries if q.size])
        if not best.size:
            return {"median": 0.0, "q95": 0.0}
        return {"median": float(np.median(best)), "q95": float(np.quantile(best, 0.95))}


def cosine_profile(
    embedder: TextEmbedder, episodes: Sequence[Episode], llm: LLMClient
) -> CosineProfile:
    """Replay ``episodes`` through Naive RAG without a cut-off and record every cosine."""
    from recallbench.memory.naive_rag import NaiveRAG

    method = NaiveRAG(llm, embedder, threshold=-1.0, top_k=1_000_000)
    queries = []
    for episode in episodes:
        method.reset(episode)
        user = episode.speakers[-1]
        for session in episode.sessions:
            for recall in replay_recalls(method, episode, session, user):
                queries.append(np.asarray(recall.info["cosine"], dtype=float))
            method.observe(session)
    return CosineProfile(embedder.name, tuple(queries))
