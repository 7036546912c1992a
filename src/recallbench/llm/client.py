"""The LLM facade: render a PromptTask, look up the cache, call the backend, parse, record usage.

``LLM`` is synchronous for its callers (memory methods, protocols, judges). Async backends run on
a private event loop in a daemon thread, so ``run_many`` overlaps calls up to the backend's
concurrency bound while the caller just waits, and it works inside notebooks whose own loop is
already running. Cache lookups happen in the caller's thread before anything is sent.

Caching: every backend's replies are cached when a cache is given, so a rerun of a finished run
answers every call from the cache. LLM replies are keyed by backend, model, messages and decoding
parameters; unseeded sampled calls are not cached. Extractive replies come from code, so their
key also holds the package's code fingerprint, the task's fields (an offline implementation
may read fields the template does not show) and the configuration bound into the offline
implementation (``functools.partial`` arguments such as thresholds); calls whose fields are not plain data (JSON,
dataclasses, numpy) are computed every time.

Failure policy: a call that fails after the backend's bounded retries gives ``task.fallback``
(``""`` for ``chat``) with ``failure`` set and counts under ``failures``; an unparseable reply
gives ``task.fallback`` and counts under ``parse_failures``. When ``breaker.after`` calls in a
row fail (an unreachable endpoint, a server that errors on everything), the circuit breaker
opens: that call and every later one raise ``EndpointDown``, so a run stops in seconds instead
of failing every remaining call. Configuration mistakes (bad key, unknown model, a task without
an offline implementation on the extractive backend) raise.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

from recallbench import meter
from recallbench.llm.cache import Cache, offline_config_key
from recallbench.llm.calls import PARSE_ERRORS, Call, CircuitBreaker, call_key, fields_key
from recallbench.llm.prices import PriceTable
from recallbench.llm.runtime import LoopThread, Progress, progress_enabled
from recallbench.llm.task import CALL_FAILURE, PARSE_FAILURE, Message, PromptTask, TaskResult
from recallbench.llm.types import (
    Backend,
    BackendCallError,
    Completion,
    Decoding,
    count_message_tokens,
)
from recallbench.llm.usage import Usage


class LLM:
    """Run PromptTasks and free-form chats on one backend, with cache and usage accounting.

    Args:
        backend: an ``ExtractiveBackend``, ``OpenAIBackend`` or ``HFBackend``.
        cache: reply cache. Extractive replies are cached too (keyed by the package's code
            fingerprint), so a rerun of a finished run answers every call from the cache.
        prices: price table (default: ``PriceTable()``).
        seed: default sampling seed for calls that give none.
        temperature, max_tokens: when not None, override every call's own value.
    """

    def __init__(
        self,
        backend: Backend,
        cache: Cache | None = None,
        prices: PriceTable | None = None,
        *,
        seed: int | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> None:
        self.backend = backend
        self.cache = cache
        self.prices = prices or PriceTable()
        self.usage = Usage()
        self.breaker = CircuitBreaker()
        self.seed = seed
        self.temperature = temperature
        self.max_tokens = max_tokens
        self._loop: LoopThread | None = None
        self._loop_lock = threading.Lock()

    @property
    def model(self) -> str:
        return self.backend.model

    @property
    def context_length(self) -> int:
        return self.backend.context_length

    def count_tokens(self, text: str) -> int:
        """Count tokens with a local tokenizer (exact for hf models, approximate for OpenAI)."""
        return self.backend.count_tokens(text)

    # -- public calls ---------------------------------------------------------------------

    def run(self, task: PromptTask, **fields: Any) -> TaskResult:
        """Render ``task`` with ``fields``, call (or hit the cache), parse and record usage."""
        return self._execute([self._task_call(task, fields)], progress=False, desc=task.name)[0]

    def run_many(
        self, task: PromptTask, fields_list: list[dict[str, Any]], *, progress: bool | None = None
    ) -> list[TaskResult]:
        """Run ``task`` over many field dicts, concurrently on async backends; order is kept."""
        calls = [self._task_call(task, fields) for fields in fields_list]
        return self._execute(calls, progress=progress_enabled(progress), desc=task.name)

    def chat(
        self,
        messages: list[Message],
        *,
        name: str,
        stage: str,
        offline: Callable[[], str],
        max_tokens: int = 256,
        temperature: float = 0.0,
        seed: int | None = None,
    ) -> TaskResult:
        """Free-form generation; ``value`` is the stripped reply (``offline()`` if extractive)."""
        call = Call(
            name,
            stage,
            list(messages),
            self._decoding(max_tokens, temperature, seed),
            offline,
            None,
            "",
        )
        return self._execute([call], progress=False, desc=name)[0]

    def describe(self) -> dict[str, Any]:
        """Return what produced the outputs (for run.json): backend, model, prices; no secrets."""
        price = self.prices.price(self.model)
        return {
            "backend": self.backend.name,
            "model": self.model,
            "base_url": getattr(self.backend, "base_url", None),
            "context_length": self.context_length,
            "cache": self.cache.path if self.cache else None,
            "price_per_1m": None if price is None else [price.input_per_1m, price.output_per_1m],
            "prices_source": self.prices.source,
        }

    def close(self) -> None:
        """Close the backend client and stop the event loop thread."""
        if self._loop is not None:
            aclose = getattr(self.backend, "aclose", None)
            if aclose is not None:
                self._loop.run(aclose())
            self._loop.stop()
            self._loop = None
        self.backend.close()

    def __enter__(self) -> LLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"LLM(backend={self.backend!r}, cache={self.cache!r})"

    # -- internals ------------------------------------------------------------------------

    def _decoding(self, max_tokens: int, temperature: float, seed: int | None) -> Decoding:
        return Decoding(
            max_tokens=self.max_tokens if self.max_tokens is not None else max_tokens,
            temperature=self.temperature if self.temperature is not None else temperature,
            seed=seed if seed is not None else self.seed,
        )

    def _task_call(self, task: PromptTask, fields: dict[str, Any]) -> Call:
        offline = None
        if task.offline is not None:
            offline = lambda: task.offline(**fields)  # noqa: E731
        dec = self._decoding(task.max_tokens, task.temperature, task.seed)
        return Call(
            task.name,
            task.stage,
            task.render(**fields),
            dec,
            offline,
            task.parse,
            task.fallback,
            fields_key(fields) if self.backend.offline else "",
            offline_config_key(task.offline) if self.backend.offline and task.offline else "",
        )

    def _key(self, call: Call) -> str | None:
        return None if self.cache is None else call_key(call, self.backend, self.model)

    def _execute(self, calls: list[Call], *, progress: bool, desc: str) -> list[TaskResult]:
        with meter.timed("llm_calls"):
            return self._execute_timed(calls, progress=progress, desc=desc)

    def _execute_timed(self, calls: list[Call], *, progress: bool, desc: str) -> list[TaskResult]:
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
                got = self._async_loop().run(self._amany([calls[i] for i in misses], done))
                for i, result in zip(misses, got, strict=True):
                    results[i] = result
            for i in misses if not self.backend.is_async else ():
                results[i] = self._call_sync(calls[i])
                done(results[i])
        finally:
            done.close()
        return [r for r in results if r is not None]

    def _async_loop(self) -> LoopThread:
        with self._loop_lock:
            if self._loop is None:
                self._loop = LoopThread()
            return self._loop

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
        key = self._key(call)
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
        prompt = count_message_tokens(call.messages, self.count_tokens)
        return self._finish(call, Completion(text, prompt, self.count_tokens(text), latency))

    def _finish(self, call: Call, completion: Completion, cached: bool = False) -> TaskResult:
        full_cost = self.prices.cost(
            self.model,
            completion.prompt_tokens,
            completion.completion_tokens,
            local=self.backend.local,
        )
        if not cached:
            if not self.backend.offline:
                self.breaker.success()
            key = self._key(call)
            if key is not None and self.cache is not None:
                self.cache.put(
                    key,
                    {
                        "text": completion.text,
                        "prompt_tokens": completion.prompt_tokens,
                        "completion_tokens": completion.completion_tokens,
                        "model": self.model,
                    },
                )
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
