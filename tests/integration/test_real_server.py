"""A REAL OpenAI-compatible server: llama-cpp-python serving the SmolLM2-135M GGUF (issue 10).

Starts ``python -m llama_cpp.server`` on 127.0.0.1 and runs one small THEANINE slice and one
LUFY QA slice through ``generator=openai``; a rerun of each must send zero requests (every call
from the LLM cache). SmolLM2-135M is far too small for THEANINE's structured tasks, so their
replies mostly fail to parse: the run must then say ``degraded`` (never a silent ``finished``).

Slow (the server builds llama.cpp from source, ~6-17 min on 2 cores): ``make test-server``,
or ``pytest -m slow tests/integration/`` once ``make server`` installed it.

The server (``recallbench.testing.llama_server``) runs with llama.cpp's extra CPU buffer types
off: see that module for the AMX crash this avoids.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"


def _run(base: str, tmp: Path, job: str, args: list[str]) -> tuple[dict, dict]:
    env = {**os.environ, "RECALLBENCH_DATA_DIR": str(FIXTURES), "LOCAL_KEY": "sk-local"}
    env["RECALLBENCH_STAMP"] = "real"
    cmd = [
        sys.executable,
        "-m",
        "recallbench.cli",
        *args,
        "generator=openai",
        f"generator.base_url={base}",
        "generator.api_key_env=LOCAL_KEY",
        "generator.model=smollm2-135m",
        "generator.concurrency=2",
        "generator.max_tokens=48",
        "generator.price_per_1m=[0.0,0.0]",
        "generator.context_length=8192",
        f"paths.results_dir={tmp}",
        "episodes=1",
        f"job={job}",
        "progress=false",
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run_dir = next(tmp.glob(f"runs/*/real/{job}"))
    info = json.loads((run_dir / "run.json").read_text())
    usage = json.loads((run_dir / "usage.json").read_text())
    return info, usage


SLICES = {
    "theanine": ["dataset=msc", "memory=theanine", "protocol.target_sessions=[3]"],
    "lufy_qa": ["experiment=lufy_table11", "lufy_pair=lufy", "judge=lexical"],
}


@pytest.mark.parametrize("name", sorted(SLICES))
def test_a_real_server_runs_the_slice_and_a_rerun_sends_nothing(name, server, tmp_path):
    started = time.monotonic()
    info, usage = _run(server, tmp_path, "first", SLICES[name])
    wall = time.monotonic() - started
    totals = usage["totals"]
    assert info["status"] in ("finished", "degraded")
    assert totals["calls"] > 0 and totals["cached_calls"] == 0
    assert totals["completion_tokens"] > 0 and totals["failures"] == 0
    if totals["parse_failures"] / totals["calls"] > 0.05:
        assert info["status"] == "degraded"  # never a silent `finished`
    rate = totals["completion_tokens"] / max(totals["latency_s"], 1e-9)
    print(
        f"\n{name}: {totals['calls']} calls, {totals['prompt_tokens']} prompt + "
        f"{totals['completion_tokens']} completion tokens, {rate:.0f} completion tok/s per "
        f"call, {totals['parse_failures']} parse failures, status {info['status']}, "
        f"wall {wall:.0f} s"
    )
    _, again = _run(server, tmp_path, "rerun", SLICES[name])
    assert again["totals"]["calls"] == totals["calls"]
    assert again["totals"]["cached_calls"] == again["totals"]["calls"]  # zero requests sent
