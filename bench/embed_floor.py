"""The least time the embeddings of a results folder's runs can take: encodes at MiniLM's rate.

    python bench/embed_floor.py --data-dir ../shared/data <results folder> [...]
    python bench/embed_floor.py --data-dir ../shared/data --corpus longmemeval <folder> [...]

``bench/tables.py`` prices LM scoring against a floor (``bench/lm_floor.py``) but not the
embedding stage, which is 25-46% of most offline targets' cold time. Here the floor of that
stage is its cache misses (``usage.json`` ``compute.embeddings.misses``: texts sent to the
model) over the rate at which the embedded MiniLM encodes real utterances on this machine,
measured in this process on MSC's first utterances (each text once, no cache, the
embedder's own batching), at the start and at the end. The runs' embedding seconds also
hold each process's model load and the cache lookups (hits), so the ratio bounds the encodes'
excess from above. Per results folder it prints the
misses, the seconds the runs spent embedding, the rate they got and the stage's time over its
floor. The rate depends on text length (MSC utterances: ~15 words); memory summaries and
persona facts are of the same order. LongMemEval's user turns are far longer (MiniLM reads up to
256 word pieces of each): ``--corpus longmemeval`` measures the rate on the first distinct user
turns of its S histories (what ``memory=flat_retrieval`` embeds) instead.

Since the embedder's load is timed apart (``usage.json`` ``seconds.embedder_load``), a folder's
row gives the stage with the load (``x floor``, as before) and without it (``x w/o load``):
the load is paid once per process, whatever the misses.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as the command line sets it (before torch)


def utterances(data_dir: Path, n: int) -> list[str]:
    """The first ``n`` distinct MSC test utterances (what most offline targets embed)."""
    from recallbench.datasets import msc

    seen: dict[str, None] = {}
    for episode in msc.load(data_dir):
        for session in episode.sessions:
            for turn in session.turns:
                seen.setdefault(turn.text, None)
                if len(seen) >= n:
                    return list(seen)
    return list(seen)


def longmemeval_turns(data_dir: Path, n: int) -> list[str]:
    """The first ``n`` distinct user turns of LongMemEval's S histories (what the flat index
    embeds; the oracle file when S is absent)."""
    from recallbench.datasets import longmemeval

    seen: dict[str, None] = {}
    for variant in ("s", "oracle"):
        try:
            episodes = longmemeval.load(data_dir, variant=variant, limit=max(1, n // 100))
        except FileNotFoundError:
            continue
        for episode in episodes:
            for session in episode.sessions:
                for turn in session.turns:
                    if turn.speaker == "user" and turn.text.strip():
                        seen.setdefault(turn.text, None)
                    if len(seen) >= n:
                        return list(seen)
        return list(seen)
    return list(seen)


def encode_rate(texts: list[str]) -> float:
    """Texts per second of MiniLM encodes of ``texts`` (no cache), this process."""
    from recallbench.embed.minilm import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    embedder.encode(texts[:32])  # load and warm up
    start = time.perf_counter()
    embedder.encode(texts)
    return len(texts) / (time.perf_counter() - start)


def stage(folder: Path) -> tuple[int, float, float]:
    """(texts encoded, seconds embedding, seconds loading the embedder) over every run under
    ``folder``."""
    misses, seconds, load = 0, 0.0, 0.0
    for path in folder.glob("runs/**/usage.json"):
        compute = json.loads(path.read_text()).get("compute") or {}
        misses += int((compute.get("embeddings") or {}).get("misses", 0))
        seconds += float((compute.get("seconds") or {}).get("embeddings", 0.0))
        load += float((compute.get("seconds") or {}).get("embedder_load", 0.0))
    return misses, seconds, load


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--corpus", choices=("msc", "longmemeval"), default="msc")
    opts = parser.parse_args(argv)
    corpus = {
        "msc": ("MSC utterances", utterances),
        "longmemeval": ("LongMemEval S user turns", longmemeval_turns),
    }
    label, read = corpus[opts.corpus]
    texts = read(opts.data_dir, opts.texts)
    rates = [encode_rate(texts)]
    print(f"MiniLM: {rates[0]:.0f} texts/s on {len(texts)} {label}", flush=True)
    rows = [(f, *stage(f)) for f in opts.folders]
    rates.append(encode_rate(texts))
    rate = sum(rates) / 2
    print(f"MiniLM at the end: {rates[1]:.0f} texts/s; floors at their mean, {rate:.0f} texts/s")
    print(
        f"{'results folder':<50} {'misses':>8} {'embed s':>8} {'load s':>7} {'texts/s':>8} "
        f"{'floor s':>8} {'x floor':>8} {'x w/o load':>10}"
    )
    for folder, misses, seconds, load in rows:
        total = seconds + load
        got = f"{misses / total:8.0f}" if total else "       -"
        floor = misses / rate
        ratio = f"{total / floor:8.2f}" if misses else "       -"
        bare = f"{seconds / floor:10.2f}" if misses else "         -"
        print(
            f"{str(folder)[-50:]:<50} {misses:>8} {total:>8.1f} {load:>7.1f} {got} {floor:>8.1f} "
            f"{ratio} {bare}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
