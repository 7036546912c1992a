"""One whole paper table from a REAL model: THEANINE Table 2 (ablations) through a llama-cpp-python
server serving the SmolLM2-135M GGUF, with structured outputs (issue 23.5).

Every row of the table is produced by the LLM (response generation, session summaries, THEANINE's
relation linking and timeline refinement), so the run shows whether a small open model gets
through a whole table: the jobs of every dataset run as ``make reproduce-table-theanine-2`` runs
them (``generator=openai`` against the server, ``generator.structured`` = ``--structured``,
a fresh results folder, so nothing comes from a cache), then the table is rendered.

    PYTHONPATH=src .venv/bin/python bench/real_table.py [--data-dir data/fixtures] \\
        [--episodes 1] [--structured auto] [--results /tmp/real_table]

Printed: wall time of the runs and of the table, per job the status, calls, parse failures and
repair turns per task, whether THEANINE and "w/o Timeline Refinement" replied differently
(identical offline on the fixtures: refinement changes nothing the extractive backend copies),
and where the table is. The LAST line is ``wall_s=<seconds> status=<worst job status>``.

Measured (2026-11-26, code 627e999, 2 cores shared with a bench, llama.cpp on 1 thread,
structured=auto -> llamacpp, ``--episodes 1 --datasets msc`` on the fixtures): the 5 MSC jobs in
425 s (2408 s earlier at load ~20), 166 task calls, 0 parse failures, every job ``finished``;
THEANINE and "w/o Timeline Refinement" differ in 7 of 11 replies (identical offline).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from recallbench.run.sweep import STAMP_ENV, new_stamp
from recallbench.testing.llama_server import LlamaServer

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "data" / "fixtures"
EXPERIMENT = "theanine_table2"
PAIR = ("theanine", "theanine_no_refinement")  # the rows the extractive backend cannot tell apart


def cli(args: list[str], env: dict[str, str]) -> float:
    """Run ``python -m recallbench.cli <args>``; return its wall time (exits on failure)."""
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "recallbench.cli", *args], env=env)
    if proc.returncode != 0:
        sys.exit(f"real_table: {' '.join(args[:3])} ... exited {proc.returncode}")
    return time.perf_counter() - started


def job_line(run_dir: Path) -> tuple[str, str]:
    """``<job> <status> calls=.. <task>: parse failures/calls ...`` and the job's status."""
    info = json.loads((run_dir / "run.json").read_text())
    usage = json.loads((run_dir / "usage.json").read_text())
    tasks = " ".join(
        f"{name}={b['calls']}c/{b.get('parse_failures', 0)}pf/{b.get('repairs', 0)}r"
        for name, b in sorted(usage["tasks"].items())
    )
    mode = (info.get("generator") or {}).get("structured")
    line = f"  {run_dir.name:<48} {info['status']:<11} structured={mode} {tasks}"
    return line, str(info["status"])


def replies(run_dir: Path) -> list[str]:
    rows = (run_dir / "predictions.jsonl").read_text().splitlines()
    return [json.loads(r)["output"] for r in rows if r.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=FIXTURES)
    parser.add_argument("--episodes", type=int, default=None, help="per dataset (default: all)")
    parser.add_argument("--structured", default="auto")
    parser.add_argument("--datasets", default="msc,cc")
    parser.add_argument("--results", type=Path, default=Path("/tmp/recallbench-real-table"))
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the server on a kill too
    env = {
        **os.environ,
        "RECALLBENCH_DATA_DIR": str(args.data_dir.resolve()),
        "RECALLBENCH_RESULTS_DIR": str(args.results.resolve()),
        STAMP_ENV: new_stamp(),  # the runs' one stamp: the sweep folder read below
        "HF_HUB_OFFLINE": "1",
        "WANDB_MODE": "disabled",
    }
    cc_dir = args.data_dir if (args.data_dir / "conversation_chronicles").is_dir() else FIXTURES
    data = {"cc": [f"dataset.data_dir={cc_dir.resolve()}"]}
    with LlamaServer(n_threads=args.threads) as server:
        generator = [
            "generator=openai",
            f"generator.base_url={server.base_url}",
            "generator.model=smollm2-135m",
            f"generator.structured={args.structured}",
            "generator.price_per_1m=[0.0,0.0]",
            "generator.context_length=8192",
            # one request at a time (the server decodes one at a time: a queue behind it only
            # times out) and a long timeout (a loaded CPU makes a 256-token reply take minutes)
            "generator.concurrency=1",
            "generator.timeout_s=900",
            "progress=false",
        ]
        generator += [f"episodes={args.episodes}"] if args.episodes else []
        started = time.perf_counter()
        for dataset in args.datasets.split(","):
            overrides = [f"dataset={dataset}", *data.get(dataset, []), *generator]
            took = cli([f"experiment={EXPERIMENT}", *overrides], env)
            print(f"runs {dataset}: {took:.0f} s", flush=True)
        runs_s = time.perf_counter() - started
    table_s = cli(["table", EXPERIMENT], env)
    sweep = args.results / "runs" / EXPERIMENT / env[STAMP_ENV]
    statuses: list[str] = []
    print(f"runs: {runs_s:.0f} s, table: {table_s:.0f} s; run folders under {sweep}")
    for run_dir in sorted(p for p in sweep.iterdir() if (p / "run.json").is_file()):
        line, status = job_line(run_dir)
        statuses.append(status)
        print(line)
    differ: dict[str, Any] = {}
    for dataset in args.datasets.split(","):
        ra, rb = (replies(sweep / f"{dataset}-{m}-openai") for m in PAIR)
        differ[dataset] = f"{sum(x != y for x, y in zip(ra, rb, strict=True))}/{len(ra)}"
    print(f"THEANINE vs w/o Timeline Refinement: replies that differ {differ}")
    tables = sorted((args.results / "tables").rglob("*table2.*"))
    print("table files: " + ", ".join(str(t) for t in tables))
    worst = next((s for s in ("failed", "interrupted", "degraded") if s in statuses), "finished")
    print(f"wall_s={runs_s + table_s:.0f} status={worst}")


if __name__ == "__main__":
    main()
