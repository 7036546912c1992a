"""Refit LUFY's Table 2 weights on the LUFY dataset and print them beside the paper's.

    python scripts/fit_lufy_weights.py --data-dir ../shared/data [--embedder minilm] \
        [--surprise lm] [--threshold 0.8] [--max-pairs N] [--l2 0.001] [--out FILE.json]

Stage 1 fits wA, wP, wL on every annotated user turn of the chosen systems; stage 2 fits wR1,
wR2 on the ``Naive RAG`` conversations with the first three fixed (LUFY sec. 3.4; CANDOR is not
available). The normalization bounds (sec. 3.2) are the min-max of the sample and are printed
too (``--calibrate`` prints only them). Logic: recallbench.lufy_fit.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from recallbench.datasets import load
from recallbench.embed import build_embedder
from recallbench.llm import build_llm
from recallbench.lufy_fit import PairTable, calibrate, collect_pairs, fit_two_stage
from recallbench.memory.arousal import EMOBANK_RELPATH
from recallbench.memory.lufy import METRICS, PAPER_WEIGHTS, Lufy
from recallbench.memory.naive_rag import NaiveRAG


def _subset(table: PairTable, prefix: str) -> PairTable:
    keep = [i for i, pid in enumerate(table.ids) if pid.startswith(prefix)]
    out = PairTable([table.ids[i] for i in keep], target=[table.target[i] for i in keep])
    out.raw = {m: [v[i] for i in keep] for m, v in table.raw.items()}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True, help="data root holding lufy/")
    parser.add_argument("--embedder", default="minilm", choices=["minilm", "hashing"])
    parser.add_argument("--surprise", default="lm", choices=["lm", "unigram"])
    parser.add_argument("--systems", nargs="+", default=["Naive RAG", "MemoryBank", "LUFY"])
    parser.add_argument("--threshold", type=float, default=0.8, help="replay retrieval cosine")
    parser.add_argument("--max-pairs", type=int, default=None)
    parser.add_argument("--l2", type=float, default=1e-3)
    parser.add_argument("--cache-dir", default="results/cache", help="arousal model cache")
    parser.add_argument("--calibrate", action="store_true", help="print bounds only")
    parser.add_argument("--out", default=None, help="write the result as JSON here")
    args = parser.parse_args(argv)

    embedder = build_embedder({"kind": args.embedder})
    llm = build_llm({"backend": "extractive"}, cache_path=None)
    emobank = str(Path(args.data_dir) / EMOBANK_RELPATH)
    lufy = Lufy(llm, embedder, surprise=args.surprise, emobank_path=emobank,
                arousal_cache_dir=args.cache_dir)  # fmt: skip
    replay = NaiveRAG(llm, embedder, threshold=args.threshold)
    episodes = load("lufy", args.data_dir, system=args.systems)
    table = collect_pairs(episodes, lufy, replay, max_pairs=args.max_pairs)
    bounds = calibrate(table)
    if args.calibrate:
        print(json.dumps({"n": len(table), "bounds": bounds}, indent=2))
        return 0
    stage2 = _subset(table, "lufy/Naive RAG/")
    result = fit_two_stage(table, stage2 if len(stage2) >= 2 else table, bounds, l2=args.l2)
    result["setup"] = {
        "embedder": embedder.name, "surprise": args.surprise, "L": "offline lexical heuristic",
        "systems": args.systems, "replay_threshold": args.threshold, "max_pairs": args.max_pairs,
        "arousal": lufy.arousal_model().info,
    }  # fmt: skip
    print(f"{'metric':<7}{'ours':>10}{'paper':>10}")
    for m in METRICS:
        print(f"{m:<7}{result['weights'][m]:>10.3f}{PAPER_WEIGHTS[m]:>10.3f}")
    print(f"n = {result['n_stage1']} (stage 1), {result['n_stage2']} (stage 2); bounds = {bounds}")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=2, allow_nan=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
