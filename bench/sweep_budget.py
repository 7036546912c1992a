"""A sweep stopped by its budget says so (issue 45): six jobs, three processes, one Redis store.

Starts a real ``redis-server`` and the local OpenAI stub, runs six MSC jobs (``memory.k=1..6``)
in three ``local_parallel`` processes sharing ``store=redis://...`` and ``sweep.max_calls=15``,
then ``recallbench status`` of the sweep. Prints the sweep's exit status (75: interrupted and
resumable), the requests the server received (the budget: 15) and what ``status`` shows: the
sweep ledger's figures beside the jobs' own sum, and why they differ.

The command is typed without ``stamp=``, as users type it (issue 53: the checks once chose a
stamp of their own, so a sweep whose second turned between the two exited 0); ``--stamp s``
passes one. ``--repeat N`` runs the same sweep N times (each in its own results folder) and
prints every exit status on the last line.

    python bench/sweep_budget.py [--fixtures data/fixtures] [--stamp S] [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from recallbench.testing.redis_server import RedisServer
from recallbench.testing.stub import StubServer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixtures", type=Path, default=Path("data/fixtures"))
    parser.add_argument("--stamp", help="stamp=S on the command line (default: none, as typed)")
    parser.add_argument("--repeat", type=int, default=1, help="run the same sweep N times")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="sweep-budget-"))
    env = {
        **os.environ,
        "RECALLBENCH_DATA_DIR": str(args.fixtures.resolve()),
        "RECALLBENCH_JOBS": "3",
    }
    env.pop("RECALLBENCH_STAMP", None)
    codes = [_sweep(root / f"try{i}", env, args.stamp) for i in range(args.repeat)]
    print("exit statuses:", " ".join(map(str, codes)), "(75 expected each time)")


def _sweep(root: Path, env: dict[str, str], stamp: str | None) -> int:
    with RedisServer(root / "redis") as redis, StubServer(latency_s=0.05) as stub:
        cmd = [
            "-m",
            "dataset=msc",
            "memory=memory_retrieval",
            "embedder=hashing",
            "generator=openai",
            "generator.model=gpt-4o-mini",
            f"generator.base_url={stub.base_url}",
            "episodes=1",
            "progress=false",
            "tag=t",
            "memory.k=1,2,3,4,5,6",
            f"store={redis.url}",
            "sweep.max_calls=15",
            "hydra/launcher=local_parallel",
            *([f"stamp={stamp}"] if stamp else []),
            f"paths.results_dir={root}/results",
        ]
        cli = [sys.executable, "-m", "recallbench.cli"]
        done = subprocess.run([*cli, *cmd], env=env, capture_output=True, text=True)
        print("$ recallbench", " ".join(cmd))
        print("exit:", done.returncode, "(75: interrupted, resumable)")
        print("requests the server received:", stub.requests, "(sweep.max_calls=15)")
        print("last line:", (done.stderr.strip().splitlines() or [""])[-1])
        for folder in sorted((root / "results" / "runs" / "t").iterdir()):
            status = subprocess.run(
                [*cli, "status", str(folder)], env=env, capture_output=True, text=True
            )
            print(f"$ recallbench status {folder}")
            print(status.stdout + status.stderr)
        return done.returncode


if __name__ == "__main__":
    main()
