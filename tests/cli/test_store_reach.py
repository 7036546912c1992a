"""An unreachable store at the start (issue 45, item 1): every command that takes ``store=``
says so in one line naming the URL, the cause and the command to retry, exits 75 (a server
that may come back) or 2 (a URL that cannot be right), and makes no folder."""

from __future__ import annotations

import contextlib
import json
import socketserver
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from recallbench.cli import main
from recallbench.cli.cache import cache_main
from recallbench.cli.matrix import matrix_main
from recallbench.cli.sweep import status_main
from recallbench.cli.table import table_main
from recallbench.errors import ConfigError, StoreUnreachable
from recallbench.store import reach_store
from recallbench.testing.redis_server import free_port

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"
RUN = ["dataset=msc", "memory=memory_retrieval", "generator=extractive", "progress=false"]


def _commands(url: str, root: Path) -> dict[str, tuple[object, list[str], str]]:
    """name -> (entry point, argv, the retry command's start); ``main`` reads sys.argv."""
    results = f"paths.results_dir={root / 'results'}"
    return {
        "run": (main, [*RUN, f"store={url}", results], "recallbench dataset=msc"),
        "sweep": (main, ["-m", *RUN, "memory.k=1,2", f"store={url}", results], "recallbench -m"),
        "cache import": (
            cache_main,
            ["import", str(FIXTURES), "--store", url],
            "recallbench cache import",
        ),
        "cache export": (
            cache_main,
            ["export", str(root / "exported"), "--store", url],
            "recallbench cache export",
        ),
        "table": (table_main, ["theanine_table1", f"store={url}", results], "recallbench-table"),
        "matrix": (matrix_main, [f"store={url}", results], "recallbench-matrix"),
        "status": (status_main, [str(root / "sweep")], "recallbench status"),
    }


def _status_sweep(root: Path, url: str) -> None:
    """A sweep folder whose sweep.json names the store ``url``."""
    (root / "sweep").mkdir()
    state = {"sweep": "t/s", "store": url, "jobs": {"j": {"status": "finished"}}}
    (root / "sweep" / "sweep.json").write_text(json.dumps(state))


@pytest.mark.parametrize(
    "command", ["run", "sweep", "cache import", "cache export", "table", "matrix", "status"]
)
@pytest.mark.parametrize(
    ("url", "code", "cause"),
    [
        ("redis://127.0.0.1:{port}/0", 75, "unreachable (Error 111 connecting"),
        ("redis://no-such-host.invalid:6379/0", 2, "no such host"),
    ],
)
def test_an_unreachable_store_is_one_line_no_folder(
    command, url, code, cause, tmp_path, monkeypatch, capsys
):
    url = url.format(port=free_port())
    monkeypatch.setenv("RECALLBENCH_DATA_DIR", str(FIXTURES))
    monkeypatch.chdir(tmp_path)
    if command == "status":
        _status_sweep(tmp_path, url)
    entry, argv, retry = _commands(url, tmp_path)[command]
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    monkeypatch.setattr(sys, "argv", ["recallbench", *argv])
    with pytest.raises(SystemExit) as stop:
        entry() if entry is main else entry(argv)  # type: ignore[operator]
    err = capsys.readouterr().err
    assert stop.value.code == code, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert url in err and cause in err and f"retry: {retry}" in err, err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


@pytest.mark.parametrize(
    ("url", "error", "words"),
    [
        ("redis://127.0.0.1:abc/0", ConfigError, "Port could not be cast"),
        ("redis://127.0.0.1:{port}/0", StoreUnreachable, "Connection refused"),
        ("redis://no-such-host.invalid:1/0", ConfigError, "no such host"),
        ("redis://127.0.0.1:{stub}/0", ConfigError, "not a Redis server"),
    ],
)
def test_reach_tells_a_mistyped_url_from_a_server_that_may_come_back(url, error, words):
    with _http_400() as port:  # an HTTP server where the URL expects Redis
        url = url.format(port=free_port(), stub=port)
        with pytest.raises(error, match=words) as raised:
            reach_store(url, "recallbench again")
    assert str(raised.value).endswith("retry: recallbench again")


@contextlib.contextmanager
def _http_400() -> Iterator[int]:
    """A server that answers anything with an HTTP error (a proxy at a mistyped port)."""

    class Reply(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            self.request.recv(1024)
            self.request.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")

    with socketserver.TCPServer(("127.0.0.1", 0), Reply) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield int(server.server_address[1])
        finally:
            server.shutdown()


def test_reach_accepts_a_server_and_refuses_a_db_it_does_not_have(redis_server):
    reach_store(redis_server.url, "x")  # answers: nothing raised
    reach_store("sqlite", "x")  # nothing to reach
    with pytest.raises(ConfigError, match="DB index is out of range"):
        reach_store(redis_server.url.rsplit("/", 1)[0] + "/999", "x")
