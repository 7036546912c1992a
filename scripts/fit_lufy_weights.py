"""Refit LUFY's Table 2 weights on the LUFY dataset and print them beside the paper's.

    python scripts/fit_lufy_weights.py --data-dir ../shared/data [--embedder minilm] \
        [--surprise lm] [--threshold 0.5] [--stage1-pairs 300] [--stage2-pairs 200] \
        [--l2 0.001] [--out FILE.json]

Stage 1 fits wA, wP, wL on a random sample of annotated user turns of the ``LUFY`` and
``MemoryBank`` conversations (the paper: 300 CANDOR pairs, not available here); stage 2 fits wR1,
wR2 with the first three fixed on a sample of the ``Naive RAG`` conversations (the paper: 200
human-RAG pairs), whose R1/R2 counts come from replaying them through a no-forgetting store.
The normalization bounds (sec. 3.2) are the min-max of both samples; ``--calibrate`` prints only
them. The L metric comes from ``--generator`` (default: the extractive backend's offline
heuristic). Logic: recallbench.papers.lufy.fit.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from omegaconf import OmegaConf

from recallbench import CONF_DIR
from recallbench.cli.build import build_embedder
from recallbench.datasets import load
from recallbench.io import write_json
from recallbench.llm import build_llm
from recallbench.llm.lm_scores import use_score_cache
from recallbench.memory.lufy import EMOBANK_RELPATH, METRICS, PAPER_WEIGHTS, Lufy
from recallbench.memory.naive_rag import NaiveRAG
from recallbench.papers.lufy.fit import PairTable, calibrate, collect_pairs, fit_two_stage


def _union(a: PairTable, b: PairTable) -> PairTable:
    return PairTable(a.ids + b.ids, {m: a.raw[m] + b.raw[m] for m in METRICS}, a.target + b.target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True, help="data root holding lufy/")
    parser.add_argument("--embedder", default="minilm", choices=["minilm", "hashing"])
    parser.add_argument("--surprise", default="lm", choices=["lm", "unigram"])
    parser.add_argument("--generator", default="extractive", help="backend of the L metric")
    parser.add_argument("--stage1-systems", nargs="+", default=["LUFY", "MemoryBank"])
    parser.add_argument("--stage2-systems", nargs="+", default=["Naive RAG"])
    parser.add_argument("--stage1-pairs", type=int, default=300)
    parser.add_argument("--stage2-pairs", type=int, default=200)
    parser.add_argument("--threshold", type=float, default=0.5, help="replay retrieval cosine")
    parser.add_argument("--l2", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--cache-dir", default="results/cache", help="arousal model, embedding and LM-score caches"
    )
    parser.add_argument("--calibrate", action="store_true", help="print bounds only")
    parser.add_argument("--out", default=None, help="write the result as JSON here")
    args = parser.parse_args(argv)

    # the runs' caches (paths.cache_dir): vectors and LM scores a run or an earlier fit computed
    embedder = build_embedder(
        OmegaConf.load(CONF_DIR / "embedder" / f"{args.embedder}.yaml"), cache_dir=args.cache_dir
    )
    use_score_cache(Path(args.cache_dir) / "lm_scores.sqlite")
    llm = build_llm({"backend": args.generator}, cache_path=None)
    emobank = str(Path(args.data_dir) / EMOBANK_RELPATH)
    lufy = Lufy(
        llm,
        embedder,
        surprise=args.surprise,
        emobank_path=emobank,
        arousal_cache_dir=args.cache_dir,
    )
    replay = NaiveRAG(llm, embedder, threshold=args.threshold)
    tables = [
        collect_pairs(load("lufy", args.data_dir, system=systems), lufy, replay, n, args.seed)
        for systems, n in (
            (args.stage1_systems, args.stage1_pairs),
            (args.stage2_systems, args.stage2_pairs),
        )
    ]
    bounds = calibrate(_union(*tables))
    if args.calibrate:
        print(json.dumps({"n": [len(t) for t in tables], "bounds": bounds}, indent=2))
        return 0
    result = fit_two_stage(tables[0], tables[1], bounds, l2=args.l2)
    result["setup"] = {
        "embedder": embedder.name,
        "surprise": args.surprise,
        "generator": args.generator,
        "stage1_systems": args.stage1_systems,
        "stage2_systems": args.stage2_systems,
        "replay_threshold": args.threshold,
        "seed": args.seed,
        "arousal": lufy.arousal_model().info,
    }
    print(f"{'metric':<7}{'ours':>10}{'paper':>10}")
    for m in METRICS:
        print(f"{m:<7}{result['weights'][m]:>10.3f}{PAPER_WEIGHTS[m]:>10.3f}")
    print(f"n = {result['n_stage1']} (stage 1), {result['n_stage2']} (stage 2)")
    print(f"bounds = {json.dumps({k: [round(x, 3) for x in v] for k, v in bounds.items()})}")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        write_json(args.out, result, sort_keys=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
