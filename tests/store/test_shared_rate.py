"""``generator.rpm`` holds per endpoint across processes that share a store (issue 34).

Four processes, each with ``generator.rpm=R`` and its own requests, start sending at one moment
against the recording stub. With per-process buckets the stub would see 4R per minute; through
the store's bucket it sees R. Shortened but honest: R = 600/min (10/s) over ~12 s instead of
120/min over minutes, the steady rate measured after the bucket's one-second burst.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time

import pytest

from recallbench.testing.stub import StubServer, default_reply

RPM = 600.0
PROCESSES = 4
CALLS = 30  # per process: 120 requests, ~11 s at 10/s

WORKER = textwrap.dedent("""
    import pathlib, sys, time
    from recallbench.llm.config import build_llm
    from recallbench.store import open_store, use_store
    spec, cache, base, go, me, calls, rpm = sys.argv[1:]
    use_store(open_store(spec, cache))
    cfg = {"backend": "openai", "model": "gpt-4o-mini", "base_url": base, "rpm": float(rpm),
           "concurrency": 4}
    llm = build_llm(cfg, None)
    pathlib.Path(f"{go}.{me}").touch()
    while not pathlib.Path(go).exists():
        time.sleep(0.01)
    for k in range(int(calls)):
        llm.chat([{"role": "user", "content": f"{me}-{k}"}], name="rate", stage="answer",
                 offline=lambda: "")
    llm.close()
""")


@pytest.fixture(params=["sqlite", "redis"])
def spec(request) -> str:
    if request.param == "sqlite":
        return "sqlite"
    return str(request.getfixturevalue("redis_server").url)


def test_four_processes_share_one_rate(spec, tmp_path):
    times: list[float] = []
    lock = threading.Lock()

    def record(body):
        with lock:
            times.append(time.monotonic())
        return default_reply(body)

    go = tmp_path / "go"
    with StubServer(reply=record) as stub:
        args = [spec, str(tmp_path / "cache"), stub.base_url, str(go)]
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", WORKER, *args, str(i), str(CALLS), str(RPM)],
                stderr=subprocess.PIPE,
                text=True,
            )
            for i in range(PROCESSES)
        ]
        deadline = time.monotonic() + 120
        while not all((tmp_path / f"go.{i}").exists() for i in range(PROCESSES)):
            assert time.monotonic() < deadline, "workers did not start"
            assert all(p.poll() is None for p in procs), [p.stderr.read() for p in procs]
            time.sleep(0.05)
        go.touch()  # all four send from now on
        for p in procs:
            _, err = p.communicate(timeout=180)
            assert p.returncode == 0, err
    assert len(times) == PROCESSES * CALLS
    burst = int(RPM / 60)  # the bucket holds one second's worth
    steady = times[burst:]
    rate = (len(steady) - 1) / (steady[-1] - steady[0]) * 60
    assert rate == pytest.approx(RPM, rel=0.10), f"{rate:.0f}/min, configured {RPM:.0f}"
