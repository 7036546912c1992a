"""A local OpenAI-compatible stub server for tests and benchmarks (127.0.0.1 only).

It serves ``POST /v1/chat/completions`` and ``POST /v1/embeddings`` with deterministic replies,
a configurable per-request latency and scripted failures (HTTP status with optional
``Retry-After``, or a stall longer than the client's timeout). It is an asyncio server, so one
thread holds hundreds of requests in flight while they "think"; it counts requests and the
maximum number in flight, which is how tests check the client's concurrency bound.

Use in-process (``with StubServer(latency_s=0.1) as stub: stub.base_url``) or as a separate
process (``python -m recallbench.testing.stub --latency 0.1`` prints ``READY <base_url>``), which keeps
the stub off the client's interpreter lock in benchmarks. The process serves until SIGTERM or
SIGINT, so ``nohup python -m recallbench.testing.stub --port 8765 &`` keeps serving;
``--until-stdin-closes`` also stops it when its stdin closes (a parent that holds the pipe).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import threading
from collections import deque
from collections.abc import Sequence
from typing import Any

from recallbench.testing._replies import Fault, Reply, default_reply, hash_vector, words

__all__ = ["Fault", "Reply", "StubServer", "default_reply", "hash_vector", "main"]


class StubServer:
    """An asyncio OpenAI-compatible server on 127.0.0.1 running in a background thread.

    Args:
        latency_s: time each successful request "thinks" before answering.
        reply: request body -> reply text (default: ``default_reply``).
        port: 0 picks a free port.
        embedding_dim: length of ``/v1/embeddings`` vectors unless the request sets ``dimensions``.
    """

    def __init__(
        self,
        latency_s: float = 0.0,
        reply: Reply | None = None,
        port: int = 0,
        embedding_dim: int = 64,
    ) -> None:
        self.latency_s = latency_s
        self.reply = reply or default_reply
        self.port = port
        self.embedding_dim = embedding_dim
        self.faults: deque[Fault] = deque()
        self.always: Fault | None = None  # when set, every request fails this way
        self._rate: tuple[float, list[Fault], random.Random] | None = None
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.auth_headers: list[str] = []
        self.bodies: deque[dict[str, Any]] = deque(maxlen=1000)  # the latest request bodies
        self._hold_after: int | None = None  # requests after this many wait for release()
        self._released = threading.Event()
        self.held = 0  # requests waiting at the gate now
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI ``base_url`` of this server (``http://127.0.0.1:<port>/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def push_faults(self, *faults: Fault) -> None:
        """Make the next requests (in arrival order) fail as scripted."""
        self.faults.extend(faults)

    def fault_rate(self, rate: float, faults: Sequence[Fault], seed: int = 0) -> None:
        """Fail a seeded random share ``rate`` of later requests, cycling through ``faults``.

        ``rate=0`` switches it off. Scripted ``push_faults`` still come first.
        """
        self._rate = (rate, list(faults), random.Random(seed)) if rate > 0 else None

    def _scheduled(self) -> Fault | None:
        if self._rate is None:
            return None
        rate, faults, rng = self._rate
        if rng.random() >= rate:
            return None
        fault = faults[0]
        faults.append(faults.pop(0))
        return fault

    def hold_after(self, n: int) -> None:
        """Let ``n`` more requests through; hold every later one until ``release()``.

        A test that must stop a client mid-run waits for ``held`` to become positive: the client
        is then certainly inside a call, with work left.
        """
        self._released.clear()
        self._hold_after = self.requests + n

    def release(self) -> None:
        """Open the gate: held requests (and later ones) are answered."""
        self._hold_after = None
        self._released.set()

    def reset_stats(self) -> None:
        """Zero the request counters."""
        self.requests = self.max_in_flight = 0
        self.auth_headers.clear()
        self.bodies.clear()

    def start(self) -> StubServer:
        """Start serving in a daemon thread; return self once the port is bound."""
        self._loop = asyncio.new_event_loop()
        ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(ready,), daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("stub server did not start within 10 s")
        return self

    def stop(self) -> None:
        """Stop the server and its thread."""
        if self._loop is None or self._thread is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop = self._thread = None

    def __enter__(self) -> StubServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _serve(self, ready: threading.Event) -> None:
        loop = self._loop
        assert loop is not None
        asyncio.set_event_loop(loop)
        self._server = loop.run_until_complete(
            asyncio.start_server(self._handle, "127.0.0.1", self.port, backlog=1024)
        )
        self.port = self._server.sockets[0].getsockname()[1]
        ready.set()
        try:
            loop.run_forever()
        finally:
            self._server.close()
            for task in asyncio.all_tasks(loop):
                task.cancel()
            loop.run_until_complete(asyncio.sleep(0))
            loop.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        k, v = line.split(":", 1)
                        headers[k.strip().lower()] = v.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                status, extra, payload = await self._respond(method, path, headers, body)
                data = json.dumps(payload).encode()
                head_out = [f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}"]
                head_out += [f"{k}: {v}" for k, v in extra.items()]
                head_out += ["Content-Type: application/json", f"Content-Length: {len(data)}"]
                writer.write(("\r\n".join(head_out) + "\r\n\r\n").encode() + data)
                await writer.drain()
                if headers.get("connection", "").lower() == "close":
                    return
        except (ConnectionError, asyncio.CancelledError):
            return
        finally:
            writer.close()

    async def _respond(
        self, method: str, path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, dict[str, str], dict[str, Any]]:
        self.requests += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        self.auth_headers.append(headers.get("authorization", ""))
        try:
            if self._hold_after is not None and self.requests > self._hold_after:
                self.held += 1
                try:
                    while not self._released.is_set():
                        await asyncio.sleep(0.01)
                finally:
                    self.held -= 1
            fault = self.always or (self.faults.popleft() if self.faults else self._scheduled())
            if fault is not None and fault.stall_s <= 0:
                extra = {} if fault.retry_after is None else {"Retry-After": str(fault.retry_after)}
                message = f"scripted {fault.status}"
                if fault.status == 401:  # like a real server, name the key that was refused
                    message += f": incorrect API key {headers.get('authorization', '')}"
                return fault.status, extra, fault.body or {"error": {"message": message}}
            if fault is not None:
                await asyncio.sleep(fault.stall_s)
            body = json.loads(raw or b"{}")
            self.bodies.append(body)
            if self.latency_s > 0:
                await asyncio.sleep(self.latency_s)
            if method == "POST" and path.endswith("/chat/completions"):
                return 200, {}, self._chat(body)
            if method == "POST" and path.endswith("/embeddings"):
                return 200, {}, self._embeddings(body)
            return 404, {}, {"error": {"message": f"no route {method} {path}"}}
        finally:
            self.in_flight -= 1

    def _chat(self, body: dict[str, Any]) -> dict[str, Any]:
        text = self.reply(body)
        prompt = sum(words(str(m.get("content", ""))) + 4 for m in body.get("messages", []))
        return {
            "id": f"chatcmpl-stub{self.requests}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "stub"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": words(text),
                "total_tokens": prompt + words(text),
            },
        }

    def _embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        inputs = body.get("input", [])
        texts = [inputs] if isinstance(inputs, str) else list(inputs)
        dim = int(body.get("dimensions") or self.embedding_dim)
        data = [
            {"object": "embedding", "index": i, "embedding": hash_vector(str(t), dim)}
            for i, t in enumerate(texts)
        ]
        tokens = sum(words(str(t)) for t in texts)
        return {
            "object": "list",
            "data": data,
            "model": body.get("model", "stub"),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }


def main(argv: list[str] | None = None) -> None:
    """Run the stub in the foreground until SIGTERM/SIGINT; print ``READY <base_url>`` once it
    listens."""
    import signal

    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Serves until SIGTERM or SIGINT (Ctrl-C), also in the background (nohup ... &).",
    )
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per request")
    parser.add_argument(
        "--until-stdin-closes",
        action="store_true",
        help="also stop when stdin closes (for a parent process that holds a pipe to it)",
    )
    args = parser.parse_args(argv)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())

    def stop_when_stdin_closes() -> None:
        sys.stdin.read()
        stop.set()

    if args.until_stdin_closes:
        threading.Thread(target=stop_when_stdin_closes, daemon=True).start()
    stub = StubServer(latency_s=args.latency, port=args.port).start()
    print(f"READY {stub.base_url}", flush=True)
    try:
        while not stop.wait(0.5):  # a timed wait keeps the main thread responsive to signals
            pass
    finally:
        stub.stop()


if __name__ == "__main__":
    main()
