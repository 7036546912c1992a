"""A job's meter: the budget that every LLM of the job shares, and the plan's dry replay.

Budget (``generator.max_usd``, ``generator.max_calls``): before a request is sent, the meter
checks that it fits. ``max_calls`` bounds the requests sent (cache hits are free); ``max_usd``
bounds what they cost at the model's price (``llm.prices``): a request reserves its worst case
(prompt estimate + ``max_tokens`` at the output price) and settles at the reply's real cost, so
requests in flight cannot overshoot together (to the accuracy of the local prompt-token
estimate). A request that does not fit raises ``BudgetExceeded``: the run stops as
``interrupted`` with the reason (exit status 75) and resumes with ``resume_dir=`` like any
interrupted run; the budget counts what earlier attempts of the run spent (``Runner`` seeds the
meter from ``usage.json``), so it bounds the run, not one attempt. One meter serves every LLM
of a job (the run's generator and the judges' own generators), under the run generator's budget.

Sweep budget (``sweep.max_usd``, ``sweep.max_calls``): the same reservation, made in the
sweep's ledger in the store (``recallbench.store``: ``<paths.cache_dir>/store.sqlite`` on one
machine, the Redis server across machines) after the job's own budget admitted the request, as
one atomic check-and-add: every job of the sweep (``runs/<tag>/<stamp>/``, the ledger's name)
counts against one bound, and past it every job stops ``interrupted`` (exit 75); a resume with
a raised bound continues (the ledger keeps what the sweep sent and spent, across attempts).
Deviation: a job killed with ``kill -9`` leaves its in-flight reservations in the ledger (they
count as spent), which errs on the side of the bound.

Plan (``plan=true``): the meter is ``dry``. Nothing is sent: a call the cache holds is answered
from it (so what follows it is what the real run would do; counted ``cached``), a call that an
earlier batch of the plan (of this job or an earlier job of the sweep) will have sent is counted
a ``repeat`` (a cache hit once that batch ran), any other call is answered by the
task's offline implementation (its text stands in for the reply; a task without one gets an
empty reply) and counted: prompt tokens (the local tokenizer's estimate), completion tokens
estimated by the stand-in reply's length and bounded by ``max_tokens``, and the dollars both
cost. Where a task's later calls depend on what the model replies (a relation that adds an
edge, a decision that asks a further question), the dry replay follows the offline answers, so
its counts are an estimate of such a run; where they do not, they are exact. Repeats are an
estimate too wherever a prompt holds an earlier reply (two jobs that answer one question alike
offline may not alike on a model): ``to send`` lies between ``calls - cached - repeats`` and
``calls - cached``.
"""

from __future__ import annotations

import math
import os
import platform
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from recallbench.errors import ConfigError, RunStopped
from recallbench.llm.calls import Call
from recallbench.llm.types import Completion, count_message_tokens
from recallbench.store import JSONValue, Store, Totals

BUDGET_EXIT = RunStopped.exit_status  # EX_TEMPFAIL: stopped, resume with a larger budget


class BudgetExceeded(RunStopped):
    """The job's (or the sweep's) budget stopped the run. Not an ``Exception``: nothing between
    the LLM and the runner may swallow it; the run is recorded ``interrupted`` and is resumable."""


@dataclass(frozen=True)
class Budget:
    """Upper bounds on a run's requests and dollars (None: unbounded)."""

    max_usd: float | None = None
    max_calls: int | None = None

    @classmethod
    def of(cls, cfg: Mapping[str, object], group: str = "generator") -> Budget:
        """The budget of a generator (or ``sweep``) config (``max_usd``, ``max_calls``)."""
        usd, calls = (_bound(cfg.get(key), f"{group}.{key}") for key in ("max_usd", "max_calls"))
        return cls(usd, None if calls is None else int(calls))

    def __bool__(self) -> bool:
        return self.max_usd is not None or self.max_calls is not None


def _bound(value: object, where: str) -> float | None:
    """A budget bound: None (no bound) or a number >= 0 (a numeric string too)."""
    if value is None:
        return None
    try:
        number = float(value) if isinstance(value, int | float | str) else -1.0
    except ValueError:
        number = -1.0
    if isinstance(value, bool) or number < 0:
        raise ConfigError(f"{where} must be a number >= 0, got {value!r}")
    return number


@dataclass
class PlanRow:
    """What a dry replay counted for one task of one model."""

    calls: int = 0
    cached: int = 0  # in the cache now
    repeats: int = 0  # sent by an earlier batch of the plan (a hit by then)
    prompt_tokens: int = 0  # of the calls to send
    completion_tokens: int = 0  # estimated
    completion_max: int = 0  # bounded by max_tokens
    usd: float | None = 0.0  # estimated (None: the model has no price)
    usd_max: float | None = 0.0

    def add(self, other: PlanRow) -> None:
        counts = ("calls", "cached", "repeats", "prompt_tokens", "completion_tokens")
        for name in (*counts, "completion_max"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.usd = None if None in (self.usd, other.usd) else self.usd + other.usd  # type: ignore[operator]
        self.usd_max = (
            None if None in (self.usd_max, other.usd_max) else self.usd_max + other.usd_max  # type: ignore[operator]
        )

    def to_dict(self) -> dict[str, JSONValue]:
        return dict(self.__dict__)


class SweepLedger:
    """The sweep's budget in the shared store: ``name`` is ``<tag>/<stamp>``.

    A plain class, not a dataclass (see ``Meter``)."""

    def __init__(self, store: Store, name: str, budget: Budget, holder: str = "") -> None:
        self.store, self.name, self.budget = store, name, budget
        self.holder = holder or f"{platform.node()}:{os.getpid()}"  # whose reservations

    def reserve(self, worst_usd: float) -> None:
        """Count one request of the sweep and reserve ``worst_usd``, or raise ``BudgetExceeded``."""
        b = self.budget
        ledger = f"sweep:{self.name}"
        ok, now = self.store.reserve(ledger, worst_usd, b.max_calls, b.max_usd, self.holder)
        if ok:
            return
        if b.max_calls is not None and now.sent >= b.max_calls:
            raise BudgetExceeded(
                f"budget: sweep.max_calls={b.max_calls} reached ({now.sent} requests sent by "
                f"the sweep {self.name})"
            )
        raise BudgetExceeded(
            f"budget: sweep.max_usd={b.max_usd:g} reached (${now.spent:.4f} spent by the sweep "
            f"{self.name}, ${now.reserved:.4f} in flight, the next call may cost ${worst_usd:.4f})"
        )

    def settle(self, reserved: float, usd: float | None, tokens: int = 0) -> None:
        self.store.settle(f"sweep:{self.name}", reserved, usd or 0.0, self.holder, tokens)

    def totals(self) -> Totals:
        return self.store.totals(f"sweep:{self.name}")


class Meter:
    """The budget and the plan counts of one job (module docstring). Thread-safe.

    A plain class, not a dataclass: Hydra's ``instantiate`` would read a dataclass injected
    into a generator config as a structured config.

    Args:
        budget: the job's bounds.
        dry: plan mode: nothing is sent, every call is counted.
        sweep: the sweep's ledger (``sweep.max_usd``/``max_calls``), None: no sweep budget.
    """

    def __init__(
        self, budget: Budget | None = None, dry: bool = False, sweep: SweepLedger | None = None
    ) -> None:
        self.budget = budget or Budget()
        self.sweep = sweep if sweep is not None and sweep.budget else None
        self.dry = dry
        self.sent = 0  # requests sent in this job (and earlier attempts, ``seed``)
        self.spent = 0.0  # USD of the replies to them
        self.reserved = 0.0
        self.rows: dict[tuple[str, str], PlanRow] = {}  # (model, task) -> dry-replay counts
        self.rounds: list[tuple[int, int]] = []  # (requests, concurrency) of dry batches
        self.planned: set[str] = set()  # cache keys the plan's jobs will have sent (dry)
        self.stopped: str | None = None  # why the budget refused a request: it refuses all later
        self._lock = threading.Lock()

    def seed(self, spent: float, sent: int) -> None:
        """Count what earlier attempts of the run spent (a resumed run's budget is the run's)."""
        with self._lock:
            self.spent += spent
            self.sent += sent

    @property
    def bounded(self) -> bool:
        """Is any request checked against a budget (the job's or the sweep's)?"""
        return bool(self.budget) or self.sweep is not None

    def admit(self, worst: Callable[[], float | None]) -> float:
        """Reserve one request costing at most ``worst()`` USD (asked only under ``max_usd``);
        raise ``BudgetExceeded`` when it does not fit. Returns the reservation to ``settle``.

        Once a request is refused, every later one is too (the job stops there): a smaller call
        later in the same batch does not slip through, so a resume under the same budget starts
        with the refused request again."""
        if self.dry or not self.bounded:
            return 0.0
        usd_bounds = (self.budget, self.sweep.budget if self.sweep is not None else Budget())
        worst_usd = worst() if any(b.max_usd is not None for b in usd_bounds) else 0.0
        with self._lock:
            if self.stopped is not None:
                raise BudgetExceeded(self.stopped)
            try:
                return self._reserve(worst_usd)
            except BudgetExceeded as exc:
                self.stopped = exc.reason
                raise

    def _reserve(self, worst_usd: float | None) -> float:
        """``admit`` under the lock: count one request, reserve its worst case, or refuse."""
        if self.budget.max_calls is not None and self.sent >= self.budget.max_calls:
            raise BudgetExceeded(
                f"budget: generator.max_calls={self.budget.max_calls} reached "
                f"({self.sent} requests sent)"
            )
        if worst_usd is None:
            which = "generator" if self.budget.max_usd is not None else "sweep"
            raise ConfigError(
                f"{which}.max_usd needs the model's price: it is not in llm/prices.py; "
                "set generator.price_per_1m=[input,output]"
            )
        limit = self.budget.max_usd
        # a nano-dollar of slack: ten $0.05 calls fit $0.50 despite float rounding
        if limit is not None and self.spent + self.reserved + worst_usd > limit + 1e-9:
            raise BudgetExceeded(
                f"budget: generator.max_usd={limit:g} reached (${self.spent:.4f}"
                f" spent, ${self.reserved:.4f} in flight, the next call may cost "
                f"${worst_usd:.4f})"
            )
        if self.sweep is not None:
            self.sweep.reserve(worst_usd)
        self.reserved += worst_usd
        self.sent += 1
        return worst_usd

    def settle(self, reserved: float, usd: float | None, tokens: int = 0) -> None:
        """Replace a reservation by what the reply cost (``tokens``: what it used)."""
        if self.dry or not self.bounded:
            return
        with self._lock:
            self.reserved -= reserved
            self.spent += usd or 0.0
        if self.sweep is not None:
            self.sweep.settle(reserved, usd, tokens)

    def planned_before(self, keys: list[str | None]) -> list[bool]:
        """Dry, one batch: will an earlier batch of this plan (an earlier job's too) have cached
        each key? A key repeated within the batch is sent twice, as the real batch does (its
        lookups all happen before it sends). Notes the keys."""
        with self._lock:
            seen = [key is not None and key in self.planned for key in keys]
            self.planned.update(key for key in keys if key is not None)
            return seen

    def count(self, model: str, task: str, row: PlanRow) -> None:
        """Add one dry-replayed call's counts."""
        with self._lock:
            self.rows.setdefault((model, task), PlanRow()).add(row)

    def round(self, requests: int, concurrency: int) -> None:
        """Note one batch of requests the dry replay would send at once (for the wall time)."""
        if requests:
            with self._lock:
                self.rounds.append((requests, max(1, concurrency)))

    def wall_s(self, latency_s: float, workers: int = 1) -> float:
        """Estimated wall time at ``latency_s`` per request: each batch takes
        ``ceil(n / concurrency)`` latencies; episodes replayed ``workers`` at a time overlap
        their batches, but never beyond the concurrency bound."""
        serial = sum(math.ceil(n / c) for n, c in self.rounds) * latency_s
        bound = sum(n / c for n, c in self.rounds) * latency_s
        return max(serial / max(1, workers), bound)


def stand_in(call: Call, count_tokens: Callable[[str], int]) -> Completion:
    """The dry replay's answer to a call to send: the offline implementation's text ("" when
    the task has none), its prompt estimated by ``count_tokens``, its completion by the text's
    length (``max_tokens`` when there is no text), capped at ``max_tokens``."""
    text = call.offline() if call.offline is not None else ""
    prompt = count_message_tokens(call.messages, count_tokens)
    completion = min(count_tokens(text), call.dec.max_tokens) if text else call.dec.max_tokens
    return Completion(text, prompt, completion, 0.0)


def plan_row(
    max_tokens: int,
    completion: Completion,
    cost: Callable[[Completion, int | None], float | None],
    cached: bool = False,
    repeat: bool = False,
) -> PlanRow:
    """One dry-replayed call's counts: a hit or a repeat costs nothing; a call to send costs
    its estimate (``cost(completion, None)``) and at most ``cost(completion, max_tokens)``."""
    if cached or repeat:
        return PlanRow(calls=1, cached=int(cached), repeats=int(repeat))
    return PlanRow(
        calls=1,
        prompt_tokens=completion.prompt_tokens,
        completion_tokens=completion.completion_tokens,
        completion_max=max_tokens,
        usd=cost(completion, None),
        usd_max=cost(completion, max_tokens),
    )
