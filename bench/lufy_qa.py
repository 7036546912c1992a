"""Benchmark: the complete offline LUFY Table 11 (3 methods x 17 users x 4 sessions, all questions).

    HF_HUB_OFFLINE=1 python bench/lufy_qa.py --data-dir ../shared/data [--results DIR]

Runs the three paper pairs of ``experiment=lufy_table11`` (Naive RAG, MemoryBank and LUFY, each
on its own system's logs) through ``recallbench.cli.run`` with the extractive backend, the
MiniLM embedder and the lexical judge, renders Table 11, and prints the wall time and its ratio
to the time spent loading the data (the three systems' xlsx trees). Target: under 3 minutes on
a 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("WANDB_MODE", "disabled")

from hydra import compose, initialize_config_dir  # noqa: E402
from omegaconf import open_dict  # noqa: E402

from recallbench.cli import CONF_DIR, run  # noqa: E402
from recallbench.datasets import load  # noqa: E402
from recallbench.lufy_analysis import load_spec, reproduce_from_runs  # noqa: E402

PAIRS = {"naive_rag": "Naive RAG", "memorybank": "MemoryBank", "lufy": "LUFY"}


def compose_pair(pair: str, data_dir: str, results: str, extra: list[str]):
    """Compose ``experiment=lufy_table11`` for one method/logs pair; return (cfg, choices)."""
    overrides = [
        "experiment=lufy_table11", f"lufy_pair={pair}", f"paths.data_dir={data_dir}",
        f"paths.results_dir={results}", "progress=false", "wandb.mode=disabled", *extra,
    ]  # fmt: skip
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=overrides, return_hydra_config=True)
    choices = {k: v for k, v in cfg.hydra.runtime.choices.items()
               if v is not None and not k.startswith("hydra")}  # fmt: skip
    with open_dict(cfg):
        del cfg["hydra"]
    return cfg, choices


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data-dir", default=os.environ.get("RECALLBENCH_DATA_DIR", "../shared/data")
    )
    parser.add_argument("--results", default=None, help="keep run folders here (default: temp)")
    parser.add_argument("overrides", nargs="*", help="extra Hydra overrides")
    args = parser.parse_args(argv)
    data_dir = str(Path(args.data_dir).resolve())
    results = args.results or tempfile.mkdtemp(prefix="lufy_qa_bench_")

    start = time.perf_counter()
    for system in PAIRS.values():
        load("lufy", data_dir, system=system)
    load_s = time.perf_counter() - start

    start = time.perf_counter()
    timings = {}
    for pair in PAIRS:
        t0 = time.perf_counter()
        cfg, choices = compose_pair(pair, data_dir, results, args.overrides)
        run(cfg, cfg.job, choices)
        timings[pair] = time.perf_counter() - t0
    paths = reproduce_from_runs(load_spec("lufy_table11"), results)
    wall = time.perf_counter() - start

    print(Path(paths["md"]).read_text(encoding="utf-8"))
    for pair, seconds in timings.items():
        print(f"run {pair:<11} {seconds:7.1f} s")
    print(f"data loading (3 systems, 51 episodes): {load_s:.1f} s")
    print(f"wall time (3 runs + table): {wall:.1f} s = {wall / load_s:.1f} x data loading")
    print(f"run folders: {results}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
