"""Warm lookups of the four caches (LLM replies, embeddings, LM scores, metric results), this
checkout against another revision, in one run.

    python bench/cache_lookup.py [--base REV] [--rounds 5] [--n 2000]

Each cache file is filled with ``n`` entries (replies of ~400 characters, 384-float vectors,
``[nll, tokens]`` scores, metric results of 200 items), then timed on warm hits through each
cache's public calls: one reply at a time (``Cache.get``: a generator's cache check), vectors
and scores in batches of 64 (``get_many``: an embedder's or scorer's batch), one metric result
at a time, the best of 5 passes per process. ``--base`` (default ``HEAD``: the last commit) is
exported with ``git archive`` and timed in its own process, alternating with this checkout's
``src`` round by round (each side first in every other round), so both see the same machine
load; the median over rounds of each side's seconds per lookup and their ratio (this checkout /
base) are printed. ``--base HEAD`` on a clean checkout times the same code twice: its ratios
are the noise. Values are read back and checked in both, so a layer that drops
entries cannot look fast.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BATCH = 64
REPEATS = 5  # timed passes per lookup kind in a process: its best is kept


def _timed(fn, count: int) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) / count


def worker(folder: Path, n: int) -> dict[str, float]:
    """Fill the four caches in ``folder`` and time warm lookups (seconds per lookup)."""
    import numpy as np

    from recallbench.embed.cache import EmbeddingCache
    from recallbench.llm.cache import Cache
    from recallbench.llm.score_cache import ScoreCache
    from recallbench.metrics.base import MetricResult
    from recallbench.metrics.cache import MetricCache

    rng = np.random.default_rng(0)
    texts = [f"utterance {i}: " + "word " * 12 for i in range(n)]
    replies = Cache(folder / "llm.sqlite")
    reply = {"text": "x" * 400, "prompt_tokens": 300, "completion_tokens": 80, "model": "m"}
    replies.put_many({f"k{i}": {**reply, "text": f"{i} " + "x" * 400} for i in range(n)})
    vectors = EmbeddingCache(folder / "embeddings.sqlite")
    vecs = rng.standard_normal((n, 384)).astype(np.float32)
    vectors.put_many("minilm", dict(zip(texts, vecs, strict=True)))
    scores = ScoreCache(folder / "lm_scores.sqlite")
    pairs = [(f"context {i}", t) for i, t in enumerate(texts)]
    scores.put_many("m", {p: (float(i) * 0.5, i + 1) for i, p in enumerate(pairs)})
    metrics = MetricCache(folder / "metric_results.sqlite")
    m = min(n, 200)
    for i in range(m):
        items = rng.random(200).tolist()
        metrics.put(f"r{i}", "f1", {"name": "f1"}, MetricResult(float(i), items, {"n": 200}))

    def llm() -> None:
        for i in range(n):
            got = replies.get(f"k{i}")
            assert isinstance(got, dict) and got["text"].startswith(f"{i} ")

    def emb() -> None:
        for start in range(0, n, BATCH):
            got = vectors.get_many("minilm", texts[start : start + BATCH])
            assert len(got) == len(texts[start : start + BATCH])
        assert np.array_equal(vectors.get_many("minilm", [texts[7]])[texts[7]], vecs[7])

    def lm() -> None:
        for start in range(0, n, BATCH):
            got = scores.get_many("m", pairs[start : start + BATCH])
            assert len(got) == len(pairs[start : start + BATCH])

    def metric() -> None:
        for i in range(m):
            found = metrics.get(f"r{i}")
            assert found is not None and found.value == float(i)

    out = {}
    for name, fn, count in (
        ("llm reply get", llm, n),
        ("embeddings get_many/64", emb, (n + BATCH - 1) // BATCH),
        ("lm scores get_many/64", lm, (n + BATCH - 1) // BATCH),
        ("metric result get", metric, m),
    ):
        fn()  # warm: pages in the OS cache, statements prepared
        out[name] = min(_timed(fn, count) for _ in range(REPEATS))
    for cache in (replies, vectors, scores, metrics):
        cache.close()
    return out


def _run(src: Path, n: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "PYTHONPATH": str(src)}
        done = subprocess.run(
            [sys.executable, __file__, "--worker", tmp, "--n", str(n)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    timings: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="HEAD", help="the revision to compare with")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    ns = parser.parse_args()
    if ns.worker:
        print(json.dumps(worker(Path(ns.worker), ns.n)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", ns.base, "src"], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        base_src = Path(tmp) / "src"
        sides: dict[str, list[dict[str, float]]] = {"base": [], "here": []}
        for i in range(ns.rounds):  # alternate, each first in every other round
            order = [("base", base_src), ("here", ROOT / "src")]
            for side, src in order if i % 2 == 0 else reversed(order):
                sides[side].append(_run(src, ns.n))
    print(f"median seconds per warm lookup over {ns.rounds} rounds (n={ns.n}), base={ns.base}")
    print(f"{'lookup':28} {'base':>12} {'here':>12} {'here/base':>10}")
    for name in sides["base"][0]:
        base = statistics.median(r[name] for r in sides["base"])
        here = statistics.median(r[name] for r in sides["here"])
        print(f"{name:28} {base * 1e6:10.1f}us {here * 1e6:10.1f}us {here / base:10.2f}")


if __name__ == "__main__":
    main()
