"""What one LLM call is, and what stands between it and the network.

``Call`` is a rendered PromptTask (messages, decoding, parser, offline twin); ``call_key`` is its
cache key (see ``recallbench.llm.client`` for the caching rules); ``CircuitBreaker`` stops a
run after consecutive failed calls. Split from ``client`` so the facade holds only the flow.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from recallbench.errors import EndpointDown
from recallbench.llm.cache import cache_key, source_fingerprint
from recallbench.llm.task import PARSE_ERRORS, Message
from recallbench.llm.types import Backend, Decoding

__all__ = ["PARSE_ERRORS", "Call", "CircuitBreaker", "call_key", "fields_key"]


@dataclass(frozen=True)
class Call:
    name: str
    stage: str
    messages: list[Message]
    dec: Decoding
    offline: Callable[[], str] | None
    # A batch mixes no tasks, but the flow answers every call alike: values are ``object`` here
    # and ``LLM`` gives them back as its task's ``T`` (``LLM._execute``).
    parse: Callable[[str], object] | None  # None: free-form chat, value = stripped text
    fallback: object
    # The offline reply may read fields the template does not render, so extractive cache keys
    # carry them too ("" for chat, whose offline() answers exactly its messages; None: the
    # fields are not plain data, so the call is not cached).
    offline_key: str | None = ""
    # The offline implementation's bound configuration (``cache.offline_config_key``).
    offline_config: str = ""
    attempt: int = 0  # 0: the task's own call; n >= 1: its n-th repair turn (``llm.flow``)


def _plain_json(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"not plain data: {type(value).__name__}")


def fields_key(fields: Mapping[str, object]) -> str | None:
    """Canonical JSON of task fields, or None when some field is not plain data."""
    try:
        return json.dumps(fields, sort_keys=True, ensure_ascii=False, default=_plain_json)
    except (TypeError, ValueError):
        return None


class CircuitBreaker:
    """Open after ``after`` failed calls in a row (0: never); an open breaker fails every call."""

    def __init__(self, after: int = 5) -> None:
        self.after = int(after)
        self.in_a_row = 0
        self.last_error = ""
        self._lock = threading.Lock()

    @property
    def open(self) -> bool:
        return self.after > 0 and self.in_a_row >= self.after

    def success(self) -> None:
        with self._lock:
            self.in_a_row = 0

    def failure(self, message: str) -> None:
        """Count a failed call; raise ``EndpointDown`` once the breaker is open."""
        with self._lock:
            self.in_a_row += 1
            self.last_error = message
        self.check()

    def check(self) -> None:
        # The message names the limit, not the count: calls in flight on other threads may
        # fail (and count) between the failure that opened the breaker and this line.
        if self.open:
            raise EndpointDown(
                f"the LLM endpoint failed {self.after} calls in a row after retries (last: "
                f"{self.last_error[:200]}); the run stops (run.json: failed). Check the server "
                "and generator.base_url / model, then resume the run: finished calls come from "
                "the cache (health.breaker_after sets the limit)"
            )


def call_key(call: Call, backend: Backend, model: str, scope: str | None = None) -> str | None:
    """The cache key of ``call`` on ``backend``/``model``; None: the call is never cached.

    A model backend's key names who answers: ``scope`` (``generator.cache_scope``: endpoints
    that serve the same weights on purpose share replies) or else the backend's endpoint
    (``base_url``); local models have none (their ``model`` names the weights).
    """
    params = call.dec.as_dict()
    if backend.offline:  # the offline code is the model; it never samples
        if call.offline_key is None:
            return None
        model = f"{model}@{source_fingerprint()}"
        params["offline_fields"] = call.offline_key
        if call.offline_config:
            params["offline_config"] = call.offline_config
    elif call.dec.temperature > 0 and call.dec.seed is None:
        return None  # unseeded sampling is meant to differ every time: never cached
    if not backend.offline and scope:
        params["endpoint"] = f"scope:{scope}"
    elif not backend.offline and backend.endpoint:
        params["endpoint"] = backend.endpoint
    return cache_key(backend.name, model, call.messages, params)
