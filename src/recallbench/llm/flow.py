"""How ``LLM`` answers a batch of calls: cache, offline twin, backend, parse, usage.

``CallFlow`` is the engine behind the ``LLM`` facade (``recallbench.llm.client``), which renders
tasks into ``Call``s and hands them here. Lookups happen in the caller's thread before anything
is sent; async backends run on a private event loop in a daemon thread (``LoopThread``), so a
batch overlaps up to the backend's concurrency bound while the caller just waits.

The caching and failure rules are the facade's (its module docstring); the collaborators
(backend, cache, prices, usage, circuit breaker) are the facade's own objects, passed in.

Repair turns (``generator.repairs``, default 0): a model's reply that its task cannot parse is
asked again, up to ``repairs`` times, in the same chat: the unparsed reply as the assistant's
turn, then ``REPAIR_PROMPT`` with the parser's error (which names the expected reply shape when
the task declares one). The default is 0 because the papers make no such call: a repair turn
is an extra, paid call and a deviation from their protocol (the run records it); with
``structured`` outputs replies rarely need one, without them a small open model often does.
Repair turns are cached like any call (a rerun sends nothing), never made on the no-model
``extractive`` backend (its code would answer the same again), and counted apart: usage
``repairs`` and ``repaired``, while ``parse_failures`` counts only replies still unparsed
after the last turn.

Deviations:
- Repair turns (``repairs`` > 0) are ours: no paper re-asks a reply it cannot parse (each keeps
  its fallback). Default 0 = the papers' protocol; when on, ``run.json`` and table headers say
  so, and ``REPAIR_PROMPT`` (our wording) is the only text added to the chat.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import threading
import time
from collections.abc import Callable
from typing import Any

from recallbench.llm.budget import BudgetExceeded, Meter, plan_row, stand_in
from recallbench.llm.cache import Cache, cached_reply
from recallbench.llm.calls import PARSE_ERRORS, Call, CircuitBreaker
from recallbench.llm.prices import PriceTable
from recallbench.llm.runtime import LoopThread, Progress
from recallbench.llm.task import CALL_FAILURE, PARSE_FAILURE, TaskResult, merged_turns, unparsed
from recallbench.llm.types import Backend, BackendCallError, Completion, count_message_tokens
from recallbench.llm.usage import Usage

# Ours (the papers have no repair turn): sent as the user's turn after an unparsed reply.
REPAIR_PROMPT = (
    "Your reply could not be used: {error}\n"
    "Answer the request above again, following its output format exactly."
)


class CallFlow:
    """Answer ``Call``s on one backend with a cache, usage accounting and a circuit breaker.

    Args:
        backend, cache, prices, usage, breaker: the facade's collaborators.
        key: a call's cache key (None: never cached).
        repairs: repair turns per unparsed reply (module docstring).
        meter: the job's budget and plan counts (``llm.budget``); dry: nothing is sent.
    """

    def __init__(
        self,
        backend: Backend,
        cache: Cache | None,
        prices: PriceTable,
        usage: Usage,
        breaker: CircuitBreaker,
        key: Callable[[Call], str | None],
        repairs: int = 0,
        meter: Meter | None = None,
    ) -> None:
        self.repairs = int(repairs)
        self.meter = meter or Meter()
        self.backend = backend
        self.cache = cache
        self.prices = prices
        self.usage = usage
        self.breaker = breaker
        self.key = key
        self._loop: LoopThread | None = None
        self._loop_lock = threading.Lock()
        self._slots: asyncio.Semaphore | None = None  # under a budget: requests in flight

    def run(self, calls: list[Call], *, progress: bool, desc: str) -> list[TaskResult[object]]:
        """Answer ``calls``, then the repair turns of unparsed replies; results in input order."""
        self.breaker.check()
        done = Progress(self.usage, len(calls), desc, progress)
        calls = list(calls)  # a repair turn replaces its call here, not in the caller's list
        try:
            results = self._answer(calls, done)
            pending = list(range(len(calls)))
            for _ in range(0 if self.backend.offline or self.meter.dry else self.repairs):
                pending = [i for i in pending if unparsed(results[i])]
                if not pending:
                    break
                done.more(len(pending))
                turns = [self._repair_call(calls[i], results[i]) for i in pending]
                for i, turn, result in zip(pending, turns, self._answer(turns, done), strict=True):
                    calls[i], results[i] = turn, merged_turns(results[i], result)
        finally:
            done.close()
        return results

    def _answer(self, calls: list[Call], done: Progress) -> list[TaskResult[object]]:
        """One round: cache hits and offline answers first, then the backend."""
        results: list[TaskResult[object] | None] = []
        for call in calls:
            hit = self._lookup(call)
            results.append(hit)
            if hit is not None:
                done(hit)
        misses = [i for i, r in enumerate(results) if r is None]
        if misses and self.meter.dry:  # plan: count what would be sent, send nothing
            self.meter.round(len(misses), self.backend.concurrency)
            planned = self.meter.planned_before([self.key(calls[i]) for i in misses])
            for i, repeat in zip(misses, planned, strict=True):
                reply = stand_in(calls[i], self.backend.count_tokens)
                results[i] = finished = self._finish(calls[i], reply, repeat=repeat)
                done(finished)
            return [r for r in results if r is not None]
        if misses and self.backend.is_async:
            got = self.loop().run(self._amany([calls[i] for i in misses], done))
            for i, result in zip(misses, got, strict=True):
                results[i] = result
        for i in misses if not self.backend.is_async else ():
            results[i] = finished = self._call_sync(calls[i])
            done(finished)
        return [r for r in results if r is not None]

    def _repair_call(self, call: Call, result: TaskResult[object]) -> Call:
        """The next turn of ``call``'s chat: its unparsed reply, then the parser's error."""
        try:
            if call.parse is not None:  # the error in full (failure is cut)
                call.parse(result.raw)
            error = result.failure or ""
        except PARSE_ERRORS as exc:
            error = str(exc)
        turn = [
            {"role": "assistant", "content": result.raw},
            {"role": "user", "content": REPAIR_PROMPT.format(error=error)},
        ]
        return dataclasses.replace(call, messages=[*call.messages, *turn], attempt=call.attempt + 1)

    def loop(self) -> LoopThread:
        """The private event loop thread (started on first use)."""
        with self._loop_lock:
            if self._loop is None:
                self._loop = LoopThread()
            return self._loop

    def close(self) -> None:
        """Close the backend's async client on the loop, then stop the loop thread."""
        if self._loop is not None:
            self._loop.run(self.backend.aclose())
            self._loop.stop()
            self._loop = None
            self._slots = None  # bound to that loop

    # -- internals ------------------------------------------------------------------------

    async def _amany(
        self, calls: list[Call], done: Callable[[TaskResult[object]], None]
    ) -> list[TaskResult[object]]:
        refused: list[BudgetExceeded] = []

        async def one(call: Call) -> TaskResult[object] | None:
            async with self._slot():  # a reservation holds only for a request about to be sent
                try:
                    held = self.meter.admit(lambda: self._worst(call))
                except BudgetExceeded as stop:  # not sent; the calls in flight still finish
                    refused.append(stop)
                    return None
                try:
                    completion = await self.backend.acomplete(call.messages, call.dec)
                except BackendCallError as exc:
                    self.meter.settle(held, 0.0)
                    result = self._failed(call, str(exc))
                else:
                    self.meter.settle(held, self._cost(completion), _tokens(completion))
                    result = self._finish(call, completion)
            done(result)
            return result

        tasks = [asyncio.ensure_future(one(c)) for c in calls]
        try:
            results = list(await asyncio.gather(*tasks))
        except BaseException:  # a ConfigError (bad key, unknown model) stops the whole batch
            for t in tasks:
                t.cancel()
            raise
        if refused:  # every reply paid for is cached and counted; then the run stops
            raise refused[0]
        return [r for r in results if r is not None]

    def _slot(self) -> contextlib.AbstractAsyncContextManager[Any]:
        """Under a budget, one of ``concurrency`` places: a queued call reserves its worst case
        only when its turn comes (no budget: no wait). Used on the loop thread."""
        if not self.meter.bounded or self.meter.dry:
            return contextlib.nullcontext()
        if self._slots is None:
            self._slots = asyncio.Semaphore(max(1, self.backend.concurrency))
        return self._slots

    def _call_sync(self, call: Call) -> TaskResult[object]:
        held = self.meter.admit(lambda: self._worst(call))
        try:
            completion = self.backend.complete(call.messages, call.dec)
        except BackendCallError as exc:
            self.meter.settle(held, 0.0)
            return self._failed(call, str(exc))
        self.meter.settle(held, self._cost(completion), _tokens(completion))
        return self._finish(call, completion)

    def _cost(self, completion: Completion, completion_tokens: int | None = None) -> float | None:
        tokens = completion.completion_tokens if completion_tokens is None else completion_tokens
        return self.prices.cost(
            self.backend.model, completion.prompt_tokens, tokens, local=self.backend.local
        )

    def _worst(self, call: Call) -> float | None:
        """The most ``call`` can cost: its prompt estimate plus ``max_tokens`` of reply."""
        prompt = count_message_tokens(call.messages, self.backend.count_tokens)
        return self._cost(Completion("", prompt, 0, 0.0), call.dec.max_tokens)

    def _lookup(self, call: Call) -> TaskResult[object] | None:
        """Answer without a model call: a cache hit, or the offline implementation."""
        key, cache = self.key(call), self.cache
        found = cache.get(key) if key is not None and cache is not None else None
        if found is not None and cache is not None:
            hit = cached_reply(found, f"{cache.path} {key}")
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

    def _finish(
        self, call: Call, completion: Completion, cached: bool = False, repeat: bool = False
    ) -> TaskResult[object]:
        full_cost = self._cost(completion)
        if self.meter.dry:
            row = plan_row(call.dec.max_tokens, completion, self._cost, cached, repeat)
            self.meter.count(self.backend.model, call.name, row)
        elif not cached:
            if not self.backend.offline:
                self.breaker.success()
            self._store(call, completion)
        value, failure = self._parse(call, completion.text)
        repairs_left = call.attempt < self.repairs and not self.backend.offline
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
            repairs=call.attempt,
        )
        final = failure is None or not repairs_left or call.parse is None
        self.usage.record(
            call.name, call.stage, result, full_cost, repair=call.attempt > 0, final=final
        )
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

    def _parse(self, call: Call, text: str) -> tuple[object, str | None]:
        if call.parse is None:
            return text.strip(), None
        try:
            return call.parse(text), None
        except PARSE_ERRORS as exc:
            return call.fallback, f"{PARSE_FAILURE}: {type(exc).__name__}: {str(exc)[:200]}"

    def _failed(self, call: Call, message: str) -> TaskResult[object]:
        result = TaskResult(
            value=call.fallback,
            raw="",
            parsed=False,
            failure=f"{CALL_FAILURE}: {message}",
            messages=call.messages,
            repairs=call.attempt,
        )
        self.usage.record(call.name, call.stage, result, 0.0, repair=call.attempt > 0)
        self.breaker.failure(message)
        return result


def _tokens(completion: Completion) -> int:
    """Tokens a reply used (prompt and completion), for the sweep's ledger."""
    return int(completion.prompt_tokens or 0) + int(completion.completion_tokens or 0)
