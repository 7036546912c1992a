"""Usage and cost accounting per task name, per stage and in total.

Every model call through ``LLM`` is recorded once, repair turns included (``repairs`` counts
those; ``repaired`` how many of them then parsed; ``parse_failures`` counts only replies that
stayed unparsed after the last turn, so a reply fixed by a repair turn is not a parse failure).
Token counts cover all calls, cache hits included
(they describe the work the run needs); ``cost_usd`` counts only what was spent now (cache hits
cost 0) while ``cost_usd_without_cache`` is what the same calls cost when nothing is cached, which
is the figure to compare with a paper's API cost. When a call's price is unknown (a model missing
from the price table) the bucket's cost is None and ``cost_unknown_calls`` counts such calls
(``full_cost_unknown_calls`` likewise for the without-cache figure): never a silent 0.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TypedDict

from recallbench.llm.task import PARSE_FAILURE, TaskResult
from recallbench.store import JSONValue

UNPARSED_SAMPLES = 3  # unparsed replies kept per task (usage.json "unparsed_samples")
UNPARSED_CHARS = 500


@dataclass
class Bucket:
    """Running totals of one group of calls."""

    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cost_usd_without_cache: float = 0.0
    cost_unknown_calls: int = 0
    full_cost_unknown_calls: int = 0
    latency_s: float = 0.0
    failures: int = 0
    parse_failures: int = 0
    repairs: int = 0
    repaired: int = 0

    def add(
        self,
        result: TaskResult[object],
        full_cost: float | None,
        repair: bool = False,
        final: bool = True,
    ) -> None:
        """Add one call; ``full_cost`` is its cost had it not been cached (None: unknown).

        ``repair``: the call was a repair turn; ``final``: no repair turn follows it (an
        unparsed reply that gets one is not yet a parse failure).
        """
        self.calls += 1
        self.cached_calls += int(result.cached)
        self.prompt_tokens += result.prompt_tokens
        self.completion_tokens += result.completion_tokens
        self.latency_s += result.latency_s
        self.repairs += int(repair)
        self.repaired += int(repair and result.failure is None)
        if result.failure is not None and final:
            is_parse = result.failure.startswith(PARSE_FAILURE)
            self.parse_failures += int(is_parse)
            self.failures += int(not is_parse)
        if result.cost_usd is None:
            self.cost_unknown_calls += 1
        else:
            self.cost_usd += result.cost_usd
        if full_cost is None:
            self.full_cost_unknown_calls += 1
        else:
            self.cost_usd_without_cache += full_cost

    def to_dict(self) -> dict[str, JSONValue]:
        """Return a JSON-ready dict; costs are None when any call had no known price."""
        known = self.cost_unknown_calls == 0
        full_known = self.full_cost_unknown_calls == 0
        return {
            "calls": self.calls,
            "cached_calls": self.cached_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": round(self.cost_usd, 8) if known else None,
            "cost_usd_without_cache": (
                round(self.cost_usd_without_cache, 8) if full_known else None
            ),
            "cost_unknown_calls": self.cost_unknown_calls,
            "latency_s": round(self.latency_s, 6),
            "failures": self.failures,
            "parse_failures": self.parse_failures,
            "repairs": self.repairs,
            "repaired": self.repaired,
        }


class UsageDict(TypedDict):
    """``Usage.to_dict()``: the counts per task, per stage and in total, and unparsed samples."""

    tasks: dict[str, dict[str, JSONValue]]
    by_stage: dict[str, dict[str, JSONValue]]
    totals: dict[str, JSONValue]
    unparsed_samples: dict[str, list[str]]


class Usage:
    """Thread-safe usage records of one ``LLM`` (calls come from a worker event loop too)."""

    def __init__(self) -> None:
        self.tasks: dict[str, Bucket] = {}
        self.stages: dict[str, Bucket] = {}
        self.totals = Bucket()
        self.unparsed: dict[str, list[str]] = {}  # a few unparsed replies per task, to inspect
        self._lock = threading.Lock()

    def record(
        self,
        name: str,
        stage: str,
        result: TaskResult[object],
        full_cost: float | None,
        *,
        repair: bool = False,
        final: bool = True,
    ) -> None:
        """Add one call under its task name, its stage and the totals (``Bucket.add``)."""
        with self._lock:
            for bucket in (
                self.tasks.setdefault(name, Bucket()),
                self.stages.setdefault(stage, Bucket()),
                self.totals,
            ):
                bucket.add(result, full_cost, repair, final)
            failed = result.failure is not None and result.failure.startswith(PARSE_FAILURE)
            if failed and final:
                samples = self.unparsed.setdefault(name, [])
                if len(samples) < UNPARSED_SAMPLES:
                    samples.append(result.raw[:UNPARSED_CHARS])

    def to_dict(self) -> UsageDict:
        """Return ``{"tasks": {name: {...}}, "by_stage": {stage: {...}}, "totals": {...},
        "unparsed_samples": {name: [reply, ...]}}``."""
        with self._lock:
            return {
                "tasks": {k: b.to_dict() for k, b in sorted(self.tasks.items())},
                "by_stage": {k: b.to_dict() for k, b in sorted(self.stages.items())},
                "totals": self.totals.to_dict(),
                "unparsed_samples": {k: list(v) for k, v in sorted(self.unparsed.items())},
            }
