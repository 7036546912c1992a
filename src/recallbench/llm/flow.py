"""How ``LLM`` answers a batch of calls: cache, offline twin, backend, parse, usage.

``CallFlow`` is the engine behind the ``LLM`` facade (``recallbench.llm.client``), which renders
tasks into ``Call``s and hands them here. Lookups happen in the caller's thread before anything
is sent; async backends run on a private event loop in a daemon thread (``LoopThread``), so a
batch overlaps up to the backend's concurrency bound while the caller just waits.

The caching and failure rules are the facade's (its module docstring); the collaborators
(backend, cache, prices, usage, circuit breaker) are the facade's own objects, passed in.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

from recallbench.llm.cache import Cache
from recallbench.llm.calls import PARSE_ERRORS, Call, CircuitBreaker
from recallbench.llm.prices import PriceTable
from recallbench.llm.runtime import LoopThread, Progress
from recallbench.llm.task import CALL_FAILURE, PARSE_FAILURE, TaskResult
from recallbench.llm.types import Backend, BackendCallError, Completion, count_message_tokens
from recallbench.llm.usage import Usage


class CallFlow:
    """Answer ``Call``s on one backend with a cache, usage accounting and a circuit breaker.

    Args:
        backend, cache, prices, usage, breaker: the facade's collaborators.
        key: a call's cache key (None: never cached).
    """

    def __init__(
        self,
        backend: Backend,
        cache: Cache | None,
        prices: PriceTable,
        usage: Usage,
        breaker: CircuitBreaker,
        key: Callable[[Call], str | None],
    ) -> None:
        self.backend = backend
        self.cache = cache
        self.prices = prices
        self.usage = usage
        self.breaker = breaker
        self.key = key
        self._loop: LoopThread | None = None
        self._loop_lock = threading.Lock()

    def run(self, calls: list[Call], *, progress: bool, desc: str) -> list[TaskResult]:
        """Answer ``calls`` (cache hits first, then the backend); results in input order."""
        self.breaker.check()
        done = Progress(self.usage, len(calls), desc, progress)
        results: list[TaskResult | None] = []
        for call in calls:
            hit = self._lookup(call)
            results.append(hit)
            if hit is not None:
                done(hit)
        misses = [i for i, r in enumerate(results) if r is None]
        try:
            if misses and self.backend.is_async:
                got = self.loop().run(self._amany([calls[i] for i in misses], done))
                for i, result in zip(misses, got, strict=True):
                    results[i] = result
            for i in misses if not self.backend.is_async else ():
                results[i] = self._call_sync(calls[i])
                done(results[i])
        finally:
            done.close()
        return [r for r in results if r is not None]

    def loop(self) -> LoopThread:
        """The private event loop thread (started on first use)."""
        with self._loop_lock:
            if self._loop is None:
                self._loop = LoopThread()
            return self._loop

    def close(self) -> None:
        """Close the backend's async client on the loop, then stop the loop thread."""
        if self._loop is not None:
            aclose = getattr(self.backend, "aclose", None)
            if aclose is not None:
                self._loop.run(aclose())
            self._loop.stop()
            self._loop = None

    # -- internals ------------------------------------------------------------------------

    async def _amany(
        self, calls: list[Call], done: Callable[[TaskResult], None]
    ) -> list[TaskResult]:
        async def one(call: Call) -> TaskResult:
            try:
                completion = await self.backend.acomplete(call.messages, call.dec)  # type: ignore[attr-defined]
            except BackendCallError as exc:
                result = self._failed(call, str(exc))
            else:
                result = self._finish(call, completion)
            done(result)
            return result

        tasks = [asyncio.ensure_future(one(c)) for c in calls]
        try:
            return list(await asyncio.gather(*tasks))
        except BaseException:  # a ConfigError (bad key, unknown model) stops the whole batch
            for t in tasks:
                t.cancel()
            raise

    def _call_sync(self, call: Call) -> TaskResult:
        try:
            completion = self.backend.complete(call.messages, call.dec)  # type: ignore[attr-defined]
        except BackendCallError as exc:
            return self._failed(call, str(exc))
        return self._finish(call, completion)

    def _lookup(self, call: Call) -> TaskResult | None:
        """Answer without a model call: a cache hit, or the offline implementation."""
        key = self.key(call)
        hit = self.cache.get(key) if key is not None and self.cache is not None else None
        if hit is not None:
            completion = Completion(hit["text"], hit["prompt_tokens"], hit["completion_tokens"], 0)
            return self._finish(call, completion, cached=True)
        if not self.backend.offline:
            return None
        if call.offline is None:
            raise ValueError(
                f"task {call.name!r} has no offline implementation, so the extractive "
                "backend cannot run it: give the PromptTask an `offline` or use an LLM"
            )
        start = time.perf_counter()
        text = call.offline()
        latency = time.perf_counter() - start
        prompt = count_message_tokens(call.messages, self.backend.count_tokens)
        count = self.backend.count_tokens(text)
        return self._finish(call, Completion(text, prompt, count, latency))

    def _finish(self, call: Call, completion: Completion, cached: bool = False) -> TaskResult:
        full_cost = self.prices.cost(
            self.backend.model,
            completion.prompt_tokens,
            completion.completion_tokens,
            local=self.backend.local,
        )
        if not cached:
            if not self.backend.offline:
                self.breaker.success()
            self._store(call, completion)
        value, failure = self._parse(call, completion.text)
        result = TaskResult(
            value=value,
            raw=completion.text,
            parsed=failure is None,
            cached=cached,
            prompt_tokens=completion.prompt_tokens,
            completion_tokens=completion.completion_tokens,
            latency_s=completion.latency_s,
            cost_usd=0.0 if cached else full_cost,
            failure=failure,
            messages=call.messages,
        )
        self.usage.record(call.name, call.stage, result, full_cost)
        return result

    def _store(self, call: Call, completion: Completion) -> None:
        key = self.key(call)
        if key is not None and self.cache is not None:
            self.cache.put(
                key,
                {
                    "text": completion.text,
                    "prompt_tokens": completion.prompt_tokens,
                    "completion_tokens": completion.completion_tokens,
                    "model": self.backend.model,
                },
            )

    def _parse(self, call: Call, text: str) -> tuple[Any, str | None]:
        if call.parse is None:
            return text.strip(), None
        try:
            return call.parse(text), None
        except PARSE_ERRORS as exc:
            return call.fallback, f"{PARSE_FAILURE}: {type(exc).__name__}: {str(exc)[:200]}"

    def _failed(self, call: Call, message: str) -> TaskResult:
        result = TaskResult(
            value=call.fallback,
            raw="",
            parsed=False,
            failure=f"{CALL_FAILURE}: {message}",
            messages=call.messages,
        )
        self.usage.record(call.name, call.stage, result, 0.0)
        self.breaker.failure(message)
        return result
