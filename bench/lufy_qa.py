"""Benchmark: the complete offline LUFY Table 11 (3 methods x 17 users x 4 sessions, all questions).

    HF_HUB_OFFLINE=1 python bench/lufy_qa.py --data-dir ../shared/data [--results DIR]
        [--threads N] [--jobs 2] [hydra overrides]

Runs the three paper pairs of ``experiment=lufy_table11`` (Naive RAG, MemoryBank and LUFY, each
on its own system's logs) through ``recallbench.cli.run`` with the extractive backend, the
MiniLM embedder and the lexical judge, renders Table 11, and prints the wall time and its ratio
to the time spent loading the data (the three systems' xlsx trees). Target: under 3 minutes on
a 2-core machine.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("WANDB_MODE", "disabled")


from recallbench.cli import compose_job, render_table, run  # noqa: E402
from recallbench.datasets import load  # noqa: E402
from recallbench.run.sweep import STAMP_ENV, new_stamp  # noqa: E402

os.environ[STAMP_ENV] = new_stamp()  # one stamp, 3 jobs

PAIRS = {"naive_rag": "Naive RAG", "memorybank": "MemoryBank", "lufy": "LUFY"}


def compose_pair(pair: str, data_dir: str, results: str, extra: list[str]):
    """Compose ``experiment=lufy_table11`` for one method/logs pair; return (cfg, choices)."""
    overrides = [
        "experiment=lufy_table11",
        f"lufy_pair={pair}",
        f"paths.data_dir={data_dir}",
        f"paths.results_dir={results}",
        "progress=false",
        "wandb.mode=disabled",
        *extra,
    ]
    return compose_job(overrides)


def run_pair(
    pair: str, data_dir: str, results: str, extra: list[str], threads: int | None
) -> tuple[float, float]:
    """Run one pair (in a worker process when --jobs > 1); return its wall and CPU seconds."""
    if threads:
        import torch

        torch.set_num_threads(threads)
    start, cpu = time.perf_counter(), time.process_time()
    cfg, choices = compose_pair(pair, data_dir, results, extra)
    run(cfg, cfg.job, choices)
    return time.perf_counter() - start, time.process_time() - cpu


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data-dir", default=os.environ.get("RECALLBENCH_DATA_DIR", "../shared/data")
    )
    parser.add_argument("--results", default=None, help="run folders (default: a temp dir)")
    parser.add_argument(
        "--models", default="results/models", help="arousal model cache (as `make` runs use)"
    )
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads")
    parser.add_argument("--jobs", type=int, default=1, help="pairs run in parallel processes")
    parser.add_argument("overrides", nargs="*", help="extra Hydra overrides")
    args = parser.parse_args(argv)
    data_dir = str(Path(args.data_dir).resolve())
    results = str(Path(args.results or tempfile.mkdtemp(prefix="lufy_qa_bench_")).resolve())
    models = f"memory.arousal_cache_dir={Path(args.models).resolve()}"

    start = time.perf_counter()
    for system in PAIRS.values():
        load("lufy", data_dir, system=system)
    load_s = time.perf_counter() - start

    start = time.perf_counter()
    work = {p: ([models] if p == "lufy" else []) + args.overrides for p in PAIRS}
    if args.jobs > 1:  # LUFY (the longest) first; one torch thread per worker
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(args.jobs, mp_context=ctx) as pool:
            futures = {
                p: pool.submit(run_pair, p, data_dir, results, work[p], args.threads or 1)
                for p in sorted(PAIRS, key=lambda p: p != "lufy")
            }
            timings = {p: f.result() for p, f in futures.items()}
    else:
        timings = {p: run_pair(p, data_dir, results, work[p], args.threads) for p in PAIRS}
    paths = render_table("lufy_table11", [f"paths.results_dir={results}"])
    wall = time.perf_counter() - start

    print(Path(paths["md"]).read_text(encoding="utf-8"))
    for pair, (seconds, cpu) in timings.items():
        print(f"run {pair:<11} {seconds:7.1f} s wall, {cpu:7.1f} s CPU")
    cpu_total = sum(cpu for _, cpu in timings.values())
    print(f"CPU time of the 3 runs: {cpu_total:.1f} s (machine load: {os.getloadavg()[0]:.1f})")
    print(f"data loading (3 systems, 51 episodes): {load_s:.1f} s")
    print(f"wall time (3 runs + table): {wall:.1f} s = {wall / load_s:.1f} x data loading")
    print(f"run folders: {results}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
