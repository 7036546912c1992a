"""The LLM facade: render a PromptTask, look up the cache, call the backend, parse, record usage.

``LLM`` is synchronous for its callers (memory methods, protocols, judges). Async backends run on
a private event loop in a daemon thread, so ``run_many`` overlaps calls up to the backend's
concurrency bound while the caller just waits, and it works inside notebooks whose own loop is
already running. Cache lookups happen in the caller's thread before anything is sent. The
facade renders tasks into calls; ``recallbench.llm.flow.CallFlow`` answers them.

Caching: every backend's replies are cached when a cache is given, so a rerun of a finished run
answers every call from the cache. LLM replies are keyed by backend, model, endpoint, messages
and decoding parameters (the structured-output constraint included); unseeded sampled calls are
not cached. The endpoint is part of a reply's identity: two servers that serve different
weights under one model name (llama.cpp names models by file path; many servers answer to
``default``) never share replies, and a dead ``base_url`` finds nothing another server answered.
Endpoints that serve the same weights ON PURPOSE (a replica, a moved host, ``localhost`` vs
``127.0.0.1``) share replies under one ``cache_scope`` name (``generator.cache_scope``), which
then replaces the endpoint in the key. Extractive replies come from code, so their
key also holds the package's code fingerprint, the task's fields (an offline implementation
may read fields the template does not show) and the configuration bound into the offline
implementation (``functools.partial`` arguments such as thresholds); calls whose fields are not plain data (JSON,
dataclasses, numpy) are computed every time.

Failure policy: a call that fails after the backend's bounded retries gives ``task.fallback``
(``""`` for ``chat``) with ``failure`` set and counts under ``failures``; an unparseable reply
is asked again ``repairs`` times (``generator.repairs``, default 0; ``recallbench.llm.flow``),
then gives ``task.fallback`` and counts under ``parse_failures``. When ``breaker.after`` calls in a
row fail (an unreachable endpoint, a server that errors on everything), the circuit breaker
opens: that call and every later one raise ``EndpointDown``, so a run stops in seconds instead
of failing every remaining call. Configuration mistakes (bad key, unknown model, a task without
an offline implementation on the extractive backend) raise.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

from recallbench import meter
from recallbench.errors import ConfigError
from recallbench.llm.budget import Meter
from recallbench.llm.cache import Cache, offline_config_key
from recallbench.llm.calls import Call, CircuitBreaker, call_key, fields_key
from recallbench.llm.flow import CallFlow
from recallbench.llm.prices import PriceTable
from recallbench.llm.runtime import progress_enabled
from recallbench.llm.shapes import Choice
from recallbench.llm.structured import Structured, check_mode, mode_from_owner
from recallbench.llm.task import Message, PromptTask, TaskResult
from recallbench.llm.types import Backend, Decoding
from recallbench.llm.usage import Usage
from recallbench.store import JSONValue

T = TypeVar("T")


class LLM:
    """Run PromptTasks and free-form chats on one backend, with cache and usage accounting.

    Args:
        backend: an ``ExtractiveBackend``, ``OpenAIBackend`` or ``HFBackend``.
        cache: reply cache. Extractive replies are cached too (keyed by the package's code
            fingerprint), so a rerun of a finished run answers every call from the cache.
        prices: price table (default: ``PriceTable()``).
        seed: default sampling seed for calls that give none.
        temperature, max_tokens: when not None, override every call's own value.
        structured: how tasks with a reply shape constrain decoding (``llm.structured``:
            ``off``, ``json_schema``, ``vllm``, ``llamacpp``, ``local``, ``auto``).
        cache_scope: a name that replaces the endpoint in cache keys (see module docstring).
        repairs: repair turns per unparsed reply (``recallbench.llm.flow``; 0: none).
        meter: the job's budget and plan counts, shared with its other LLMs (``llm.budget``).
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
        structured: str = "off",
        cache_scope: str | None = None,
        repairs: int = 0,
        meter: Meter | None = None,
    ) -> None:
        if repairs < 0:
            raise ConfigError(f"generator.repairs must be >= 0, got {repairs}")
        self.cache_scope = cache_scope
        self.backend = backend
        self.structured = check_mode(structured, backend.name)
        self._structured_mode: str | None = None if structured == "auto" else structured
        self.cache = cache
        self.prices = prices or PriceTable()
        self.usage = Usage()
        self.breaker = CircuitBreaker()
        self.seed = seed
        self.temperature = temperature
        self.max_tokens = max_tokens
        self._mode_lock = threading.Lock()
        self.meter = meter or Meter()
        self._flow = CallFlow(
            backend, cache, self.prices, self.usage, self.breaker, self._key, repairs, self.meter
        )

    @property
    def model(self) -> str:
        return self.backend.model

    @property
    def context_length(self) -> int:
        return self.backend.context_length

    @property
    def repairs(self) -> int:
        """Repair turns per unparsed reply (``generator.repairs``; ``recallbench.llm.flow``)."""
        return self._flow.repairs

    def count_tokens(self, text: str) -> int:
        """Count tokens with a local tokenizer (exact for hf models, approximate for OpenAI)."""
        return self.backend.count_tokens(text)

    # -- public calls ---------------------------------------------------------------------

    def run(self, task: PromptTask[T], **fields: object) -> TaskResult[T]:
        """Render ``task`` with ``fields``, call (or hit the cache), parse and record usage."""
        results = self._execute([self._task_call(task, fields)], progress=False, desc=task.name)
        return cast(TaskResult[T], results[0])  # task.parse_reply's value or task.fallback

    def run_many(
        self,
        task: PromptTask[T],
        fields_list: Sequence[Mapping[str, object]],
        *,
        progress: bool | None = None,
    ) -> list[TaskResult[T]]:
        """Run ``task`` over many field dicts, concurrently on async backends; order is kept."""
        calls = [self._task_call(task, fields) for fields in fields_list]
        results = self._execute(calls, progress=progress_enabled(progress), desc=task.name)
        return cast(list[TaskResult[T]], results)  # task.parse_reply's values or fallbacks

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
    ) -> TaskResult[str]:
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
        return cast(TaskResult[str], self._execute([call], progress=False, desc=name)[0])

    def describe(self) -> dict[str, JSONValue]:
        """Return what produced the outputs (for run.json): backend, model, prices; no secrets."""
        price = self.prices.price(self.model)
        return {
            "backend": self.backend.name,
            "model": self.model,
            "base_url": self.backend.base_url,
            "cache_scope": self.cache_scope,
            "repairs": self.repairs,
            "context_length": self.context_length,
            "cache": self.cache.path if self.cache else None,
            "price_per_1m": None if price is None else [price.input_per_1m, price.output_per_1m],
            "prices_source": self.prices.source,
            # auto never resolved: no call had a reply shape, so every reply was free text
            "structured": self._structured_mode or "off",
            "structured_asked": self.structured,
        }

    def close(self) -> None:
        """Close the backend client and stop the event loop thread."""
        self._flow.close()
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

    def structured_mode(self) -> str:
        """The structured mode in force: ``auto`` resolved (once) from the backend."""
        with self._mode_lock:
            if self._structured_mode is None:
                if not self.backend.is_async:  # hf (and no model): decoded here
                    self._structured_mode = "local"
                else:  # the openai backend: ask the endpoint who serves it
                    owner = self._flow.loop().run(self.backend.aowner())
                    self._structured_mode = mode_from_owner(owner)
            return self._structured_mode

    def _task_call(self, task: PromptTask[Any], fields: Mapping[str, object]) -> Call:
        offline = None
        if task.offline is not None:
            offline = lambda: task.offline(**fields)  # noqa: E731
        dec = self._decoding(task.max_tokens, task.temperature, task.seed)
        if task.reply is not None and self.structured != "off":
            constraint = Structured(self.structured_mode(), task.reply, task.name)
            dec = dataclasses.replace(dec, structured=constraint)
            if isinstance(task.reply, Choice):  # a cut label parses as nothing
                room = task.reply.room(wrapped=constraint.mode == "json_schema")
                dec = dataclasses.replace(dec, max_tokens=max(dec.max_tokens, room))
        return Call(
            task.name,
            task.stage,
            task.render(**fields),
            dec,
            offline,
            task.parse_reply,
            task.fallback,
            fields_key(fields) if self.backend.offline else "",
            offline_config_key(task.offline) if self.backend.offline and task.offline else "",
        )

    def _key(self, call: Call) -> str | None:
        if self.cache is None:
            return None
        return call_key(call, self.backend, self.model, self.cache_scope)

    def _execute(self, calls: list[Call], *, progress: bool, desc: str) -> list[TaskResult[object]]:
        """Answer ``calls`` of one task (or one chat). The flow answers every task alike, so its
        values are ``object``; the callers cast them back to the task's ``T``: each is
        ``task.parse_reply``'s value or ``task.fallback`` (a chat's: the stripped reply)."""
        with meter.timed("llm_calls"):
            return self._flow.run(calls, progress=progress, desc=desc)
