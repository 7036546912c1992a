"""Benchmark: import and score one 1,540-answer file with every offline metric, cold and warm.

    python bench/import_answers.py [--data-dir ../shared/data]
        [--file locomo_audit/fc-baseline/gpt-4o-mini-cot.json] [--format locomo-audit]
        [--json out.json]

Each pass runs ``recallbench import-answers`` as a user runs it (a subprocess, into a fresh
results folder made for the bench): ``cold`` with no cache (every offline judge verdict is
computed: ``mem0_j``'s twin goes through the LLM layer and its SQLite cache), ``warm`` the same
command again with ``RECALLBENCH_RERUN=1`` (a new run; the judge's replies come from the cache),
``reused`` the same command as is (the finished run of the same config, code and data is
returned: ``run.resume``). Per pass it prints the wall time, the run's own split from
``run.json`` (``import``: reading, matching and judging the answers, i.e. started ->
replayed; ``scoring``: F1, B1, Mem0's F1 and every J with their clustered intervals, replayed ->
finished), the LLM-call and metric seconds of ``usage.json``'s ``compute`` and the cache hits,
each with its ratio to the cold pass of the same bench (same machine, same load), and the
1-minute load average at the start and end of each pass.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one_pass(args: argparse.Namespace, results: Path, name: str, rerun: bool) -> dict:
    """Run the import once; return its wall time, the run's split and its usage."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "WANDB_MODE": "disabled"}
    env["RECALLBENCH_RERUN"] = "1" if rerun else "0"
    command = [
        sys.executable,
        "-m",
        "recallbench.cli",
        "import-answers",
        str(args.data_dir / args.file),
        "--format",
        args.format,
        "--name",
        "bench",
        f"paths.data_dir={args.data_dir}",
        f"paths.results_dir={results}",
        "progress=false",
        f"stamp={name}",  # one sweep folder per pass (a reused pass returns the warm one's run)
    ]
    load = [os.getloadavg()[0]]
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - started
    load.append(os.getloadavg()[0])
    if done.returncode:
        sys.exit(f"import-answers failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    folder = Path(done.stdout.strip().splitlines()[-1])
    run = json.loads((folder / "run.json").read_text())
    usage = json.loads((folder / "usage.json").read_text())
    compute = usage.get("compute") or {}
    return {
        "wall_s": wall,
        "import_s": run.get("replayed_unix", 0) - run.get("started_unix", 0),
        "scoring_s": run.get("finished_unix", 0) - run.get("replayed_unix", 0),
        "llm_s": compute.get("seconds", {}).get("llm_calls", 0.0),
        "metrics_s": compute.get("seconds", {}).get("metrics", 0.0),
        "calls": usage.get("totals", {}).get("calls", 0),
        "cached": usage.get("totals", {}).get("cached_calls", 0),
        "folder": str(folder),
        "load": load,
    }


def main() -> None:
    """Parse the arguments, run the three passes, print them with ratios to cold."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    p.add_argument("--file", default="locomo_audit/fc-baseline/gpt-4o-mini-cot.json")
    p.add_argument("--format", default="locomo-audit")
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    args.data_dir = args.data_dir.resolve()
    if not (args.data_dir / args.file).is_file():
        sys.exit(f"{args.data_dir / args.file}: not found (--data-dir, --file)")
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        results = Path(tmp) / "results"
        passes = {
            "cold": one_pass(args, results, "cold", rerun=True),
            "warm": one_pass(args, results, "warm", rerun=True),
            "reused": one_pass(args, results, "reused", rerun=False),
        }
    cold = passes["cold"]
    print(f"import-answers {args.file} ({args.format}); ratios: pass / cold of this bench")
    head = "pass      wall s   import s   scoring s   llm s   metrics s   calls  cached   load"
    print(head)
    for name, got in passes.items():
        ratio = got["wall_s"] / cold["wall_s"]
        reused = name == "reused"  # no new run: its run.json is the warm pass's
        cells = [f"{got[k]:8.2f}" if not reused else "       -" for k in ("import_s", "scoring_s")]
        print(
            f"{name:8} {got['wall_s']:7.2f} ({ratio:4.2f}x) {cells[0]}  {cells[1]}  "
            f"{got['llm_s']:6.2f}  {got['metrics_s']:9.2f}  {got['calls']:6}  {got['cached']:6}"
            f"   {got['load'][0]:.1f}->{got['load'][1]:.1f}"
        )
    if args.json:
        args.json.write_text(json.dumps(passes, indent=2))


if __name__ == "__main__":
    main()
