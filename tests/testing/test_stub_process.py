"""The stub as a separate process: it serves until a signal, also with its stdin closed."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request

import pytest


def _start(*flags: str, stdin=subprocess.DEVNULL) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "recallbench.testing.stub", *flags],
        stdin=stdin,
        stdout=subprocess.PIPE,
        text=True,
    )
    word, base_url = proc.stdout.readline().split()
    assert word == "READY"
    return proc, base_url


def _chat(base_url: str) -> str:
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi there"}]})
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=body.encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as reply:
        return json.load(reply)["choices"][0]["message"]["content"]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_background_stub_with_closed_stdin_serves_until_a_signal(signum):
    proc, base_url = _start()  # stdin is /dev/null, as under `nohup ... &`
    try:
        assert _chat(base_url).startswith("echo ")
        assert proc.poll() is None  # stdin at EOF did not stop it
        assert "hi there" in _chat(base_url)
        proc.send_signal(signum)
        assert proc.wait(10) == 0
    finally:
        proc.kill()


def test_until_stdin_closes_is_an_opt_in_for_parents_that_hold_a_pipe():
    proc, base_url = _start("--until-stdin-closes", stdin=subprocess.PIPE)
    try:
        assert _chat(base_url).startswith("echo ")
        proc.stdin.close()
        assert proc.wait(10) == 0
    finally:
        proc.kill()


def test_help_says_how_it_stops():
    out = subprocess.run(
        [sys.executable, "-m", "recallbench.testing.stub", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "SIGTERM" in out and "--until-stdin-closes" in out
