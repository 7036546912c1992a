"""A real ``redis-server`` process for tests and benchmarks: a free port, its own folder, AOF on.

    with RedisServer(tmp_path) as server:   # raises RedisMissing without redis-server on PATH
        store = RedisStore(server.url)
        server.stop()                       # the store's next call raises StoreLost
        server.start()                      # same port, same folder: the AOF brings data back

Not a home-made server and not fakeredis: the Debian package ``redis-server`` (``.ci/run``
installs it). The server is started with ``--appendonly yes`` (``--appendfsync everysec``, the
production default the README recommends; ``fsync="always"`` makes every write durable at ~2-4
ms a write); a stop (SIGTERM) writes the AOF, so a restart keeps everything written before it,
which is what the tests of a lost connection check.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path


class RedisMissing(RuntimeError):
    """``redis-server`` is not installed."""


def free_port() -> int:
    """A TCP port nobody listens on now (the OS's pick)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """One ``redis-server`` on 127.0.0.1 with its data in ``folder`` (module docstring)."""

    def __init__(
        self, folder: str | Path, port: int | None = None, fsync: str = "everysec"
    ) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RedisMissing(
                "redis-server not found on PATH (Debian: apt-get install redis-server)"
            )
        self.binary = binary
        self.folder = Path(folder)
        self.port = port or free_port()
        self.fsync = fsync
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        """Start the server (again, on the same port and folder) and wait until it answers."""
        self.folder.mkdir(parents=True, exist_ok=True)
        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir"]
        args += [str(self.folder), "--appendonly", "yes", "--appendfsync", self.fsync]
        args += ["--save", "", "--daemonize", "no", "--logfile", str(self.folder / "redis.log")]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"redis-server did not answer on port {self.port} within 10 s")

    def stop(self) -> None:
        """Stop the server (SIGTERM; it writes its AOF) and wait for it."""
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
            self.proc = None

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
