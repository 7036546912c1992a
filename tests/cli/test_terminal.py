"""What a user sees in the terminal: no per-request log lines, and a summary at the end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from recallbench.testing.stub import StubServer

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"


def test_http_clients_are_quiet_and_the_run_ends_with_a_summary(tmp_path):
    env = {**os.environ, "RECALLBENCH_DATA_DIR": str(FIXTURES), "STUB_KEY": "sk-stub"}
    env.pop("HYDRA_FULL_ERROR", None)
    with StubServer() as stub:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "recallbench.cli",
                "dataset=msc",
                "memory=memory_retrieval",
                "generator=openai",
                f"generator.base_url={stub.base_url}",
                "generator.api_key_env=STUB_KEY",
                "generator.model=stub-model",
                "generator.price_per_1m=[1.0,2.0]",
                f"paths.results_dir={tmp_path}",
                "progress=false",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        requests = stub.requests
    assert proc.returncode == 0, proc.stderr
    assert "HTTP Request" not in proc.stderr  # httpx logs one INFO line per request otherwise
    run_dir = Path(proc.stdout.strip().splitlines()[-1])
    summary = json.loads((run_dir / "summary.json").read_text())
    usage = json.loads((run_dir / "usage.json").read_text())["totals"]
    err = proc.stderr
    assert "run summary" in err and "status finished" in err
    assert f"calls {usage['calls']} · cache hits 0 · failed 0 · unparsed 0" in err
    assert usage["calls"] == requests
    assert f"cost ${usage['cost_usd']:.4f}" in err
    value = summary["metrics"]["rouge_l"]["value"]
    low, high = summary["metrics"]["rouge_l"]["ci95"]
    assert f"{value:.4g}" in err and f"[{low:.4g}, {high:.4g}]" in err
    assert f"run folder {run_dir}\n" in err
