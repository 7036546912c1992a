"""Replay throughput of whole runs against a local stub endpoint with a fixed latency (issue 10).

Runs ``recallbench`` (a subprocess, as a user would) with ``generator=openai`` against
``python -m recallbench.testing.stub`` (another process) for two slices of MSC: the
``memory_retrieval`` and ``theanine`` response runs. For each it measures a serial baseline
(``workers=1``) and the concurrent replay (``workers=auto``: one episode per request slot), with a
fresh cache each time, and prints

    calls, summed call latency, replay wall time (run.json started -> replayed), in-flight = summed latency / wall time,
    ratio = in-flight / generator.concurrency

and, as the LAST line per slice, ``ratio=<concurrent>`` next to the serial baseline's ratio
measured in the same run. Targets (issue 10): >= 0.8 for memory_retrieval and >= 0.6 for THEANINE
at concurrency 32 against a 200-500 ms stub.

    .venv/bin/python bench/run_throughput.py [--data-dir ../shared/data] [--episodes 32]
        [--baseline-episodes 4] [--concurrency 32] [--latency 0.3] [--embedder minilm|hashing]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from llm_throughput import start_stub  # noqa: E402


def run_once(base_url: str, memory: str, episodes: int, workers: str, args, tmp: Path) -> dict:
    """Run one slice; return calls, summed latency, wall time from its run folder."""
    results = tmp / f"{memory}-{workers}"
    cmd = [
        sys.executable,
        "-m",
        "recallbench.cli",
        "dataset=msc",
        f"memory={memory}",
        "generator=openai",
        f"generator.base_url={base_url}",
        "generator.api_key_env=BENCH_KEY",
        "generator.model=stub-model",
        f"generator.concurrency={args.concurrency}",
        f"embedder={args.embedder}",
        "generator.rpm=null",
        "generator.tpm=null",
        f"episodes={episodes}",
        f"workers={workers}",
        f"paths.results_dir={results}",
        f"paths.cache_dir={results / 'cache'}",
        "progress=false",
        "wandb.mode=disabled",
        "job=bench",
    ]
    env = {**os.environ, "BENCH_KEY": "sk-bench", "HF_HUB_OFFLINE": "1"}
    env["RECALLBENCH_DATA_DIR"] = str(Path(args.data_dir).resolve())
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{memory} workers={workers} failed:\n{proc.stderr[-2000:]}")
    run_dir = next(results.glob("runs/*/*/bench"))
    info = json.loads((run_dir / "run.json").read_text())
    totals = json.loads((run_dir / "usage.json").read_text())["totals"]
    # The replay only: scoring (BERTScore, MAUVE, bootstrap intervals) runs after the last call.
    wall = info["replayed_unix"] - info["started_unix"]
    calls = totals["calls"] - totals["cached_calls"]
    in_flight = totals["latency_s"] / wall
    return {
        "episodes": episodes,
        "workers": workers,
        "calls": calls,
        "latency_s": totals["latency_s"],
        "wall_s": wall,
        "in_flight": in_flight,
        "ratio": in_flight / args.concurrency,
    }


def show(memory: str, row: dict) -> None:
    print(
        f"{memory:17s} workers={row['workers']:<5} episodes={row['episodes']:<3} "
        f"calls={row['calls']:<5} summed_latency={row['latency_s']:8.1f}s "
        f"wall={row['wall_s']:7.1f}s in_flight={row['in_flight']:5.1f} ratio={row['ratio']:.2f}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--baseline-episodes", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--memory", nargs="+", default=["memory_retrieval", "theanine"])
    parser.add_argument(
        "--embedder",
        default="minilm",
        help="hashing takes the embedding model's CPU out: what is left is the harness's own",
    )
    args = parser.parse_args()
    stub, base_url = start_stub(args.latency)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for memory in args.memory:
                serial = run_once(base_url, memory, args.baseline_episodes, "1", args, Path(tmp))
                show(memory, serial)
                concurrent = run_once(base_url, memory, args.episodes, "auto", args, Path(tmp))
                show(memory, concurrent)
                print(
                    f"{memory}: ratio={concurrent['ratio']:.2f} (serial baseline "
                    f"{serial['ratio']:.2f}, speed-up per call "
                    f"{(serial['wall_s'] / serial['calls']) / (concurrent['wall_s'] / concurrent['calls']):.1f}x)",
                    flush=True,
                )
    finally:
        stub.kill()


if __name__ == "__main__":
    main()
