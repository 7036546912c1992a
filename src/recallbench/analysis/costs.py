"""API cost and time per episode from run folders (THEANINE sec. 6, Table 8, Figs. 9-10).

Reads only run-folder files, through ``run.read``: usage (tokens and cost per task and stage),
the episode count and the predictions (phase timings when the protocol recorded them).

Cost: the agent's stages only (``memory`` = memory construction, ``answer`` = response
generation; judging and TeaFarm generation are evaluation, not the agent). Two figures:
``recorded`` is usage's ``cost_usd_without_cache`` (what the calls cost at the run's prices, cache
hits included, i.e. a fresh run), and ``priced`` reprices every task's tokens at ``model`` from
the dated price table (``llm.prices``, ``PRICES_AS_OF``), which also gives the extractive
backend's token estimates a what-it-would-cost figure. The cost ratio divides by the reference
row (THEANINE = 1, as in Table 8).

Time (Fig. 10): "memory construction" and "retrieval + RG" seconds per episode. Wall-clock
when the protocol records ``timing`` predictions (``meta.observe_s``) and ``recall_s`` /
``generate_s`` on responses; otherwise the LLM latency of the ``memory`` and ``answer`` stages
from usage.json (``time_source`` says which; LLM latency excludes embedding and graph work and
is 0 for cache hits, so it understates a rerun).

Deviation: Fig. 9's costs are "calculated based on session 5"; ours cover whole episodes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from recallbench.errors import DataNotFoundError
from recallbench.llm.prices import PRICES_AS_OF, PriceTable
from recallbench.run.read import (
    RUN_FILE,
    USAGE_FILE,
    RunRecord,
    RunUsage,
    UsageBucket,
    is_run_folder,
    read_run,
)

AGENT_STAGES = ("memory", "answer")
EVAL_TASK_PREFIXES = ("judge.", "teafarm.")


@dataclass(frozen=True)
class RunCost:
    """Per-episode cost and time of one run."""

    run: str
    n_episodes: int
    cost_recorded: float | None  # USD per episode at the run's prices (None: unknown price)
    cost_priced: float | None  # USD per episode at ``price_model`` (None: no model given)
    price_model: str | None
    prices_as_of: str
    memory_s: float  # memory construction seconds per episode
    retrieval_rg_s: float  # retrieval + response generation seconds per episode
    time_source: str  # "wall-clock (protocol timings)" or "LLM latency (usage.json)"
    calls: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _missing(folder: Path, name: str) -> DataNotFoundError:
    return DataNotFoundError(f"{folder / name} not found: is {folder} a finished run folder?")


def _agent_tasks(usage: RunUsage, stages: Sequence[str]) -> list[str]:
    """Task names of the agent. usage.json keeps tasks and stages in separate buckets; use its
    ``task_stages`` map when present, else drop the evaluation tasks by name (``judge.*``,
    ``teafarm.*``): every other task is the agent's memory or answer work."""
    if usage.task_stages is not None:
        return [t for t, stage in usage.task_stages.items() if stage in stages]
    return [t for t in usage.tasks if not t.startswith(EVAL_TASK_PREFIXES)]


def run_cost(
    run_dir: str | Path,
    *,
    price_model: str | None = None,
    prices: PriceTable | None = None,
    stages: Sequence[str] = AGENT_STAGES,
) -> RunCost:
    """Return the per-episode cost and phase times of the run in ``run_dir``."""
    run = read_run(run_dir, need_record=False)
    usage = run.usage
    if usage is None:
        raise _missing(run.path, USAGE_FILE)
    if not is_run_folder(run.path):
        raise _missing(run.path, RUN_FILE)
    n = run.provenance.n_episodes or 0
    if n <= 0:
        raise ValueError(f"{run.path / RUN_FILE}: n_episodes must be > 0, got {n}")
    picked = [usage.by_stage[s] for s in stages if s in usage.by_stage]
    recorded_parts = [b.cost_recorded for b in picked]
    recorded = (
        None
        if any(c is None for c in recorded_parts)
        else sum(c for c in recorded_parts if c is not None) / n
    )
    priced = None
    if price_model is not None:
        table = prices or PriceTable()
        if table.price(price_model) is None:
            raise KeyError(f"no price for {price_model!r} in the price table ({PRICES_AS_OF})")
        tasks = [usage.tasks.get(t) or UsageBucket() for t in _agent_tasks(usage, stages)]
        costs = [
            table.cost(price_model, t.count("prompt_tokens"), t.count("completion_tokens"))
            for t in tasks
        ]
        priced = (
            sum(c for c in costs if c is not None)  # never None: the price is known (above)
            / n
        )
    memory_s, rg_s, source = _times(run, usage)
    return RunCost(
        run=str(run_dir),
        n_episodes=n,
        cost_recorded=recorded,
        cost_priced=priced,
        price_model=price_model,
        prices_as_of=PRICES_AS_OF,
        memory_s=memory_s / n,
        retrieval_rg_s=rg_s / n,
        time_source=source,
        calls=sum(b.count("calls") for b in picked),
    )


def _times(run: RunRecord, usage: RunUsage) -> tuple[float, float, str]:
    observe = recall = 0.0
    timed = False
    for p in run.predictions:
        meta = p.meta
        if "observe_s" in meta:
            observe += float(meta["observe_s"])
            timed = True
        if "recall_s" in meta or "generate_s" in meta:
            recall += float(meta.get("recall_s", 0.0)) + float(meta.get("generate_s", 0.0))
            timed = True
    if timed:
        return observe, recall, "wall-clock (protocol timings)"
    memory = usage.stage("memory").seconds()
    answer = usage.stage("answer").seconds()
    return memory, answer, "LLM latency (usage.json)"


def cost_table(
    runs: Mapping[str, str | Path],
    reference: str,
    *,
    price_model: str | None = None,
    prices: PriceTable | None = None,
) -> dict[str, dict[str, Any]]:
    """Table 8: per-episode cost and cost ratio to the ``reference`` row (ours = 1)."""
    costs = {
        label: run_cost(path, price_model=price_model, prices=prices)
        for label, path in runs.items()
    }
    if reference not in costs:
        raise KeyError(f"reference row {reference!r} not among the runs {sorted(costs)}")
    key = "cost_priced" if price_model is not None else "cost_recorded"
    base = getattr(costs[reference], key)
    out = {}
    for label, c in costs.items():
        value = getattr(c, key)
        ratio = value / base if value is not None and base else None
        out[label] = {**c.to_dict(), "cost_per_episode": value, "cost_ratio": ratio, "basis": key}
    return out
