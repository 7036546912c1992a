"""A sweep stopped by its budget says so (issue 45): six jobs, three processes, one Redis store.

Starts a real ``redis-server`` and the local OpenAI stub, runs six MSC jobs (``memory.k=1..6``)
in three ``local_parallel`` processes sharing ``store=redis://...`` and ``sweep.max_calls=15``,
then ``recallbench status`` of the sweep. Prints the sweep's exit status (75: interrupted and
resumable), the requests the server received (the budget: 15) and what ``status`` shows: the
sweep ledger's figures beside the jobs' own sum, and why they differ.

    python bench/sweep_budget.py [--fixtures data/fixtures]
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
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="sweep-budget-"))
    env = {
        **os.environ,
        "RECALLBENCH_DATA_DIR": str(args.fixtures.resolve()),
        "RECALLBENCH_JOBS": "3",
    }
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
            "stamp=s",
            f"paths.results_dir={root}/results",
        ]
        cli = [sys.executable, "-m", "recallbench.cli"]
        done = subprocess.run([*cli, *cmd], env=env, capture_output=True, text=True)
        print("$ recallbench", " ".join(cmd))
        print("exit:", done.returncode, "(75: interrupted, resumable)")
        print("requests the server received:", stub.requests, "(sweep.max_calls=15)")
        print("last line:", (done.stderr.strip().splitlines() or [""])[-1])
        folder = f"{root}/results/runs/t/s"
        status = subprocess.run([*cli, "status", folder], env=env, capture_output=True, text=True)
        print(f"$ recallbench status {folder}")
        print(status.stdout + status.stderr)


if __name__ == "__main__":
    main()
