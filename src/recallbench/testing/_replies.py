"""What the stub answers: scripted faults and deterministic replies and vectors."""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass

from recallbench.records import JSON

Reply = Callable[[dict[str, JSON]], str]


@dataclass(frozen=True)
class Fault:
    """One scripted bad answer: an HTTP status (with ``body``), or a stall of ``stall_s`` s."""

    status: int = 500
    retry_after: float | None = None  # seconds, sent as Retry-After
    stall_s: float = 0.0  # > 0: sleep this long before answering normally (client times out)
    body: dict[str, object] | None = None  # sent instead of an error message (e.g. a bad 200)


def default_reply(body: dict[str, JSON]) -> str:
    """Reply deterministically from the request (seed included); unseeded sampling adds a nonce."""
    messages = body.get("messages") or []
    last = str(messages[-1].get("content", "")) if messages else ""
    key = json.dumps([messages, body.get("seed")], sort_keys=True)
    digest = hashlib.sha256(key.encode()).hexdigest()[:8]
    nonce = ""
    if (body.get("temperature") or 0) > 0 and body.get("seed") is None:
        nonce = " " + hashlib.sha256(str(_NONCE.pop()).encode()).hexdigest()[:6]
    return f"echo {digest}{nonce}: {' '.join(last.split()[:12])}"


class _Counter:
    def __init__(self) -> None:
        self._n = 0
        self._lock = threading.Lock()

    def pop(self) -> int:
        with self._lock:
            self._n += 1
            return self._n


_NONCE = _Counter()


def hash_vector(text: str, dim: int) -> list[float]:
    """Return a deterministic unit vector for ``text`` (sha256 stream mapped to [-1, 1])."""
    out: list[float] = []
    block = 0
    while len(out) < dim:
        digest = hashlib.sha256(f"{block}:{text}".encode()).digest()
        out.extend((b - 127.5) / 127.5 for b in digest)
        block += 1
    out = out[:dim]
    norm = math.sqrt(sum(v * v for v in out)) or 1.0
    return [v / norm for v in out]


def words(text: str) -> int:
    return len(text.split())
