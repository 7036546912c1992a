"""OpenAI-compatible backend: one call (chat messages + decoding params -> text, token counts, latency).

- Rate limits (``rpm``, ``tpm``) are per process (``TokenBucket``) unless a store is given
  (``recallbench.store``; the command line always gives the job's): then one bucket per
  endpoint and model lives in the store (``SharedBucket``), and every process of the sweep that
  shares the store, on any machine with a server store, takes from it. The configured rate is
  the endpoint's, not each job's.
- ``OpenAIBackend``: the official ``openai`` client (``AsyncOpenAI``) against api.openai.com or any
  OpenAI-compatible ``base_url`` (vLLM, Ollama, llama.cpp server). Bounded concurrency (an
  ``asyncio.Semaphore``), requests- and tokens-per-minute token buckets, and bounded retries.
  Retries are the CLIENT's (``max_retries``): it retries 408/409/429/5xx, timeouts and connection
  errors with exponential backoff (0.5 s doubling to 8 s, jittered) and honours ``Retry-After`` /
  ``retry-after-ms`` up to 120 s. We add no retry loop of our own. After the bound the error
  becomes a ``BackendCallError``, which ``LLM`` counts as a failure; authentication, permission
  and not-found errors are configuration mistakes and raise ``ConfigError`` at once.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

from recallbench.errors import ConfigError
from recallbench.llm.backends.gguf import local_token_counter
from recallbench.llm.structured import request_extras
from recallbench.llm.types import (
    BackendBase,
    BackendCallError,
    Completion,
    Decoding,
    Message,
    count_message_tokens,
)
from recallbench.store import Store

CONNECTIONS_PER_CLIENT = 8


class TokenBucket:
    """An asyncio token bucket refilled at ``per_minute / 60`` per second.

    It holds at most ``burst_s`` seconds' worth (at least one request's worth). A request larger
    than the bucket waits for a full bucket and then runs the balance negative, so the long-run
    rate still holds. Waiters are served in arrival order.
    """

    def __init__(self, per_minute: float, burst_s: float = 1.0) -> None:
        if per_minute <= 0:
            raise ConfigError(f"rate limit must be > 0 per minute, got {per_minute}")
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate * burst_s)
        self.tokens = self.capacity
        self.updated = time.monotonic()
        self._lock = asyncio.Lock()

    async def acquire(self, amount: float = 1.0) -> None:
        """Wait until ``amount`` tokens (capped at the capacity) are available, then take them."""
        async with self._lock:
            need = min(amount, self.capacity)
            while True:
                now = time.monotonic()
                self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
                self.updated = now
                if self.tokens >= need:
                    self.tokens -= amount
                    return
                await asyncio.sleep((need - self.tokens) / self.rate)


class SharedBucket:
    """A token bucket held in a store (``Store.take``): every process sharing the store shares
    the rate. Same capacity rule as ``TokenBucket``; callers wait the time the store assigns
    them (served in the order they asked, across processes)."""

    def __init__(self, store: Store, name: str, per_minute: float, burst_s: float = 1.0) -> None:
        if per_minute <= 0:
            raise ConfigError(f"rate limit must be > 0 per minute, got {per_minute}")
        self.store, self.name, self.per_minute = store, name, per_minute
        self.capacity = max(1.0, per_minute / 60.0 * burst_s)

    async def acquire(self, amount: float = 1.0) -> None:
        """Take ``amount`` tokens from the shared bucket, then wait until they are due."""
        wait = await asyncio.to_thread(
            self.store.take, self.name, amount, self.per_minute, self.capacity
        )
        if wait > 0:
            await asyncio.sleep(wait)


_SECRET = re.compile(r"(sk-[A-Za-z0-9_\-]{4})[A-Za-z0-9_\-]+|(Bearer\s+)\S+")


def redact(text: str) -> str:
    """Mask anything that looks like an API key in an error message."""
    return _SECRET.sub(lambda m: (m.group(1) or m.group(2)) + "***", text)


class OpenAIBackend(BackendBase):
    """Chat completions through ``openai.AsyncOpenAI`` (see module docstring for retries).

    Args:
        model: model id sent to the server (and used for the price lookup).
        api_key: passed to the client only; never stored on this object or logged.
        base_url: None for api.openai.com, else an OpenAI-compatible server's ``.../v1``.
        concurrency: maximum requests in flight.
        rpm, tpm: requests / tokens per minute (None: unlimited). A request takes its prompt
            estimate plus ``max_tokens`` from the TPM bucket, as OpenAI's own limiter counts.
        timeout_s: per-request timeout (each retry gets a new one).
        max_retries: the client's retry bound.
        context_length: the model's context window in tokens.
        store: where the rate buckets live (``SharedBucket``); None: this process alone.
    """

    name = "openai"
    local = False
    offline = False
    is_async = True

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        concurrency: int = 8,
        rpm: float | None = None,
        tpm: float | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 4,
        context_length: int = 16385,
        store: Store | None = None,
    ) -> None:
        import openai

        if concurrency < 1:
            raise ConfigError(f"generator.concurrency must be >= 1, got {concurrency}")
        self.model = model
        self.base_url = base_url or "https://api.openai.com/v1"
        self.endpoint = self.base_url.rstrip("/")  # the cache key's endpoint part
        self.concurrency = concurrency
        self.context_length = context_length
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        # httpcore's pool scans all its connections on every request and response, which costs
        # O(concurrency) CPU per call; a few clients of <= CONNECTIONS_PER_CLIENT each keep that
        # flat (measured: ~25% of the client's CPU at concurrency 32 with one client).
        n_clients = -(-concurrency // CONNECTIONS_PER_CLIENT)
        self._clients = [
            openai.AsyncOpenAI(
                api_key=api_key, base_url=self.base_url, timeout=timeout_s, max_retries=max_retries
            )
            for _ in range(n_clients)
        ]
        self._next = 0
        self._semaphore = asyncio.Semaphore(concurrency)
        self._rpm: TokenBucket | SharedBucket | None = None
        self._tpm: TokenBucket | SharedBucket | None = None
        for unit, limit in (("rpm", rpm), ("tpm", tpm)):
            if limit and store is not None:
                bucket: TokenBucket | SharedBucket = SharedBucket(
                    store, f"{self.endpoint}|{model}|{unit}", limit
                )
            elif limit:
                bucket = TokenBucket(limit)
            else:
                continue
            setattr(self, f"_{unit}", bucket)

    def count_tokens(self, text: str) -> int:
        return local_token_counter()(text)

    async def acomplete(self, messages: list[Message], dec: Decoding) -> Completion:
        """Make one chat completion; raise ``BackendCallError`` once the retries are spent."""
        import openai

        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": dec.max_tokens,
            "temperature": dec.temperature,
        }
        if dec.seed is not None:
            kwargs["seed"] = dec.seed
        if dec.structured is not None:
            kwargs.update(request_extras(dec.structured))
        async with self._semaphore:
            if self._rpm is not None:
                await self._rpm.acquire(1)
            if self._tpm is not None:
                estimate = count_message_tokens(messages, self.count_tokens) + dec.max_tokens
                await self._tpm.acquire(estimate)
            start = time.perf_counter()
            try:
                # ``post`` is the client's documented raw-request method: same retries and
                # errors as ``chat.completions.create`` without its per-call TypedDict transform
                # (~0.5 ms CPU a call, which caps throughput at high concurrency).
                client = self._clients[self._next % len(self._clients)]
                self._next += 1
                resp: Any = await client.post("/chat/completions", body=kwargs, cast_to=object)
            except (
                openai.AuthenticationError,
                openai.PermissionDeniedError,
                openai.NotFoundError,
            ) as exc:
                raise ConfigError(
                    f"openai backend at {self.base_url}, model {self.model!r}: "
                    f"{type(exc).__name__} {exc.status_code}: {redact(str(exc))[:300]} "
                    "(check generator.model, base_url and the key's environment variable)"
                ) from None
            except openai.OpenAIError as exc:
                status = getattr(exc, "status_code", None)
                label = type(exc).__name__ + (f" {status}" if status else "")
                raise BackendCallError(
                    f"{label} (client retries up to {self.max_retries}): {redact(str(exc))[:200]}"
                ) from None
        latency = time.perf_counter() - start
        text = self._reply_text(resp)
        usage = resp.get("usage") or {}
        if usage.get("prompt_tokens") is not None:
            prompt, completion = usage["prompt_tokens"], usage.get("completion_tokens") or 0
        else:  # some compatible servers omit usage: estimate locally
            prompt = count_message_tokens(messages, self.count_tokens)
            completion = self.count_tokens(text)
        return Completion(text, int(prompt), int(completion), latency)

    def _reply_text(self, resp: Any) -> str:
        try:
            return resp["choices"][0]["message"].get("content") or ""
        except (KeyError, IndexError, TypeError, AttributeError):
            raise BackendCallError(
                f"malformed chat completion from {self.base_url}: expected "
                f"choices[0].message.content, got {str(resp)[:200]!r}"
            ) from None

    async def aowner(self) -> str | None:
        """``owned_by`` of the endpoint's first model (``GET /models``; None when it has none).

        Raises ``ConfigError`` when the endpoint does not answer: ``structured: auto`` cannot
        be resolved, and the user should name the mode."""
        import openai

        try:
            page = await self._clients[0].get("/models", cast_to=object)
        except openai.OpenAIError as exc:
            raise ConfigError(
                f"generator.structured=auto: GET {self.base_url}/models failed "
                f"({type(exc).__name__}: {redact(str(exc))[:160]}); set generator.structured to "
                "json_schema, vllm or llamacpp"
            ) from None
        data = page.get("data") if isinstance(page, dict) else None
        mine = [m for m in data or [] if isinstance(m, dict) and m.get("id") == self.model]
        first = (mine or data or [{}])[0]
        return first.get("owned_by") if isinstance(first, dict) else None

    async def aclose(self) -> None:
        for client in self._clients:
            await client.close()

    def close(self) -> None:
        pass  # the client is closed by ``LLM.close`` on its event loop (``aclose``)

    def __repr__(self) -> str:
        return (
            f"OpenAIBackend(model={self.model!r}, base_url={self.base_url!r}, "
            f"concurrency={self.concurrency})"
        )
