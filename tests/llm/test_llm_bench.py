"""The throughput benchmark runs end to end on a tiny batch (its figures are load-dependent)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "llm_throughput.py"


def test_bench_runs_and_ends_with_the_ratio_line():
    args = ["--calls", "48", "--concurrency", "8", "--latency", "0.02"]
    out = (
        subprocess.run(
            [sys.executable, str(BENCH), *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        .stdout.strip()
        .splitlines()
    )
    assert out[-1].startswith("ratio=") and 0 < float(out[-1].removeprefix("ratio=")) <= 1.05
    assert "ideal C/latency = 400.0/s" in "\n".join(out)
    assert any("48/48 cached" in line for line in out)
