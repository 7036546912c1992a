"""A sweep's store at scale: per-call store overhead SQLite vs Redis, and a sweep's wall time.

Two measurements in one run, each printed as ratios against a baseline measured in the same run:

1. **Per-call store overhead.** What the store adds to one sent request in a job: a reply-cache
   lookup (a miss), the sweep ledger's reservation and settlement, a rate-bucket take and the
   reply's write; ``--ops`` times in one process, for ``store=sqlite`` (the local file) and a
   real ``redis-server`` (started on a free port, AOF on, as the README says). Printed in
   microseconds per call, Redis / SQLite, and as a share of one request at the stub's latency.
2. **A sweep's wall time against its ideal.** ``--jobs`` processes (8) each send ``--calls``
   distinct requests at ``--concurrency`` through ``build_llm`` with the store, the sweep ledger
   (``sweep.max_calls``) and a shared ``generator.rpm`` set far above the demand (so the bucket
   is on the path but never binds) against the recording stub at ``--latency`` (300 ms). The
   ideal is calls x latency / total concurrency; printed as ideal / measured per store, and
   each store's wall time against the same sweep without a shared store (``none``: per-process
   buckets and SQLite files, no ledger), the baseline of this run.

    .venv/bin/python bench/sweep_scale.py [--jobs 8] [--calls 40] [--concurrency 4]
        [--latency 0.3] [--ops 2000]

Needs ``redis-server`` on PATH (Debian: ``apt-get install redis-server``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from recallbench.llm.cache import Cache
from recallbench.store import Store, open_store
from recallbench.testing.redis_server import RedisServer
from recallbench.testing.stub import StubServer

JOB = textwrap.dedent("""
    import pathlib, sys, time
    from recallbench.llm import PromptTask, build_llm
    from recallbench.llm.budget import Budget, Meter, SweepLedger
    from recallbench.store import open_store, use_store
    spec, cache, base, go, me, calls, conc = sys.argv[1:]
    task = PromptTask(name="bench.sweep", template=(("user", "job {me} call {i}: say hi"),),
                      offline=lambda me, i: "hi", stage="answer", max_tokens=16)
    meter = Meter()  # "none": per-process limits and caches, no sweep ledger (the baseline)
    if spec != "none":
        store = open_store(spec, cache)
        use_store(store)
        meter = Meter(sweep=SweepLedger(store, "bench/sweep", Budget(max_calls=10**9)))
    cfg = {"backend": "openai", "model": "gpt-4o-mini", "base_url": base,
           "concurrency": int(conc), "rpm": 10**6}
    llm = build_llm(cfg, pathlib.Path(cache) / "llm.sqlite", meter)
    pathlib.Path(f"{go}.{me}").touch()
    while not pathlib.Path(go).exists():
        time.sleep(0.005)
    results = llm.run_many(task, [{"me": me, "i": i} for i in range(int(calls))], progress=False)
    assert all(r.failure is None for r in results), [r.failure for r in results][:3]
    llm.close()
""")


def per_call_us(store: Store, cache: Cache, ops: int) -> float:
    """Microseconds of store work per sent request (lookup, reserve, take, settle, write)."""
    start = time.perf_counter()
    for i in range(ops):
        key = f"bench-{i}"
        cache.get(key)
        store.reserve("sweep:bench/overhead", 0.001, None, None)
        store.take("bench|m|rpm", 1, 10**9, 10**6)
        store.settle("sweep:bench/overhead", 0.001, 0.0005)
        cache.put(key, {"text": "hi", "prompt_tokens": 5, "completion_tokens": 1})
    return (time.perf_counter() - start) / ops * 1e6


def sweep_wall(spec: str, folder: Path, base_url: str, args: argparse.Namespace) -> float:
    """Seconds from the common start to the last job's end (job start-up excluded)."""
    go = folder / "go"
    common = [spec, str(folder / "cache"), base_url, str(go)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", JOB, *common, str(j), str(args.calls), str(args.concurrency)]
        )
        for j in range(args.jobs)
    ]
    while not all((folder / f"go.{j}").exists() for j in range(args.jobs)):
        if any(p.poll() not in (None, 0) for p in procs):
            raise RuntimeError("a job failed to start")
        time.sleep(0.01)
    start = time.perf_counter()
    go.touch()
    for p in procs:
        if p.wait(600) != 0:
            raise RuntimeError(f"a job failed (exit {p.returncode})")
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--calls", type=int, default=40, help="requests per job")
    parser.add_argument("--concurrency", type=int, default=4, help="per job")
    parser.add_argument("--latency", type=float, default=0.3, help="stub seconds per request")
    parser.add_argument("--ops", type=int, default=2000, help="calls of the overhead loop")
    args = parser.parse_args(argv)
    print(f"machine: {os.cpu_count()} cores, 1-min load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp, RedisServer(Path(tmp) / "redis") as redis:
        specs = {"sqlite": "sqlite", "redis": redis.url}
        overhead = {}
        for name, spec in specs.items():
            store = open_store(spec, Path(tmp) / f"o-{name}")
            cache = Cache(
                Path(tmp) / f"o-{name}" / "llm.sqlite", store=store if store.server else None
            )
            overhead[name] = per_call_us(store, cache, args.ops)
        for name, us in overhead.items():
            share = us / (args.latency * 1e6)
            print(f"store overhead {name}: {us:.0f} us per sent request = {share:.5f} of a request")
        print(f"overhead ratio redis/sqlite = {overhead['redis'] / overhead['sqlite']:.2f}")
        total = args.jobs * args.calls
        ideal = total * args.latency / (args.jobs * args.concurrency)
        walls: dict[str, float] = {}
        with StubServer(latency_s=args.latency) as stub:
            for name, spec in {"none": "none", **specs}.items():
                folder = Path(tmp) / f"sweep-{name}"
                folder.mkdir()
                before = stub.requests
                wall = sweep_wall(spec, folder, stub.base_url, args)
                sent = stub.requests - before
                walls[name] = wall
                print(
                    f"sweep {name}: {args.jobs} jobs x {args.calls} calls at concurrency "
                    f"{args.concurrency}, {args.latency * 1000:.0f} ms: {wall:.2f} s, ideal "
                    f"{ideal:.2f} s, ideal/measured = {ideal / wall:.3f}, measured/none = "
                    f"{wall / walls['none']:.3f} ({sent} requests)"
                )


if __name__ == "__main__":
    main()
