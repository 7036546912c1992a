"""A price before the run: ``recallbench ... plan=true`` replays every job dry and prints its bill.

    recallbench -m experiment=lufy_table11 generator=openai generator.model=gpt-4o-mini plan=true
    recallbench ... plan=true plan_latency_s=1.5      # wall time at 1.5 s per call
    make estimate-table-lufy-11 GENERATOR=openai MODEL=gpt-4o-mini

Each job is built exactly as a run (same configs, same cache), then replayed with a dry meter
(``recallbench.llm.budget``): nothing is sent, calls the cache holds are answered from it, every
other call is counted. Per job and in total it prints, per model and task: calls, how many the
cache already holds, how many repeat a call an earlier batch of the plan sends (hits by then;
an estimate where prompts hold earlier replies), the prompt tokens to send, the completion
tokens (estimated from the
offline stand-in's reply, and bounded by ``max_tokens``), dollars at the model's price
(``llm.prices``, or ``generator.price_per_1m``), and the wall time at the job's concurrency for
a given latency per call. No run folder is written; each job's plan is kept under its sweep
folder as ``results/runs/<tag>/<stamp>/plan/<job>.json`` (to set beside the bill the real run
then writes in its ``usage.json``; named by job, so parallel jobs never race for a name, and in
the results folder every node of a cluster writes to). The cache keys the plan's jobs will have
sent (its ``repeats``) are shared through the job's store (``recallbench.store``, namespace
``plan:<tag>/<stamp>``), so parallel jobs see each other's. ``python -m recallbench.cli.plan
<folder> ...`` totals folders of plans: ``make estimate-table-<x>`` ends with it, so a table made
by several invocations (one per dataset) gets one bill.

With ``generator.structured=auto`` the plan still asks the endpoint which mode it takes (one
``GET /models``, part of every cache key); name the mode to plan without the server.

``plan`` and ``plan_latency_s`` are not config keys (a plan makes no run): they are taken off the
command line before Hydra reads it and reach the jobs (also in other processes) as
``cli.launch.Launch.plan_latency_s``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TypedDict, cast

from recallbench.errors import ConfigError
from recallbench.io import write_json
from recallbench.llm.budget import Budget, Meter, PlanRow
from recallbench.llm.protocol import LLMClient
from recallbench.records import JSON
from recallbench.store import Store

DEFAULT_LATENCY_S = 2.0  # a short chat completion of gpt-4o-mini / gpt-3.5 class models


class JobPlan(TypedDict):
    """One job's plan as kept in ``<sweep>/plan/<job>.json``."""

    job: str
    about: str
    latency_s: float
    wall_s: float
    rows: list[dict[str, JSON]]  # model, task and the ``PlanRow`` counts


def take_plan_args(argv: list[str]) -> tuple[list[str], float | None]:
    """Strip ``plan=...`` and ``plan_latency_s=...`` from ``argv``: the rest, and the latency per
    call of a plan (None: no plan; ``cli.launch.Launch.plan_latency_s``)."""
    plan, latency, rest = False, DEFAULT_LATENCY_S, []
    for arg in argv:
        key, _, value = arg.partition("=")
        if key == "plan":
            if value.lower() not in ("true", "false"):
                raise ConfigError(f"plan={value!r}: expected plan=true or plan=false")
            plan = value.lower() == "true"
        elif key == "plan_latency_s":
            try:
                latency = float(value)
            except ValueError:
                raise ConfigError(f"plan_latency_s={value!r}: expected seconds") from None
        else:
            rest.append(arg)
    return rest, latency if plan else None


def plan_meter(budget: Budget, store: Store | None = None, sweep: str = "") -> Meter:
    """A dry meter that knows the cache keys the plan's earlier jobs will have sent (kept in
    ``store``'s namespace ``plan:<sweep>``)."""
    meter = Meter(budget, dry=True)
    if store is not None:
        meter.planned = {k for k, _ in store.scan(f"plan:{sweep}")}
    return meter


def keep_planned(meter: Meter, store: Store, sweep: str) -> None:
    """Add the keys this job's plan will have sent to the sweep's plan namespace."""
    store.put_many(f"plan:{sweep}", dict.fromkeys(sorted(meter.planned), 1))


def _usd(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _table(rows: dict[tuple[str, str], PlanRow]) -> tuple[list[str], PlanRow]:
    head = (
        f"  {'model':<22} {'task':<34} {'calls':>7} {'cached':>7} {'repeats':>8} {'to send':>8} "
        f"{'prompt tok':>11} {'completion tok est/max':>23} {'USD est / max':>19}"
    )
    lines, total = [head], PlanRow()
    for (model, task), row in sorted(rows.items()):
        total.add(row)
        lines.append(_line(model[-22:], task, row))
    lines.append(_line("", "total", total))
    return lines, total


def _line(model: str, task: str, row: PlanRow) -> str:
    completion = f"{row.completion_tokens:,} / {row.completion_max:,}"
    usd = f"{_usd(row.usd)} / {_usd(row.usd_max)}"
    return (
        f"  {model:<22} {task:<34} {row.calls:>7,} {row.cached:>7,} {row.repeats:>8,} "
        f"{row.calls - row.cached - row.repeats:>8,} "
        f"{row.prompt_tokens:>11,} {completion:>23} {usd:>19}"
    )


def _wall(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def report_plan(
    meter: Meter,
    job: str,
    about: str,
    workers: int,
    llm: LLMClient,
    keep: Path,
    latency: float = DEFAULT_LATENCY_S,
) -> JobPlan:
    """Print one job's plan (``latency`` seconds per call), keep it as JSON in the folder
    ``keep`` and leave it for the total."""
    lines, total = _table(meter.rows)
    wall = meter.wall_s(latency, workers)
    print(f"plan {job}: {about}", flush=True)
    print("\n".join(lines))
    print(f"  wall time ~{_wall(wall)} at {latency:g} s per call ({workers} episode(s) at once)")
    budget = llm.meter.budget
    if budget.max_usd is not None:
        fits = total.usd_max is not None and total.usd_max <= budget.max_usd
        print(f"  budget generator.max_usd={budget.max_usd:g}: {'fits' if fits else 'may stop'}")
    if llm.repairs:
        print(f"  not counted: up to {llm.repairs} repair turn(s) per unparsed reply")
    plan: JobPlan = {
        "job": job,
        "about": about,
        "latency_s": latency,
        "wall_s": wall,
        "rows": [{"model": m, "task": t, **r.to_dict()} for (m, t), r in meter.rows.items()],
    }
    write_json(keep / f"{job}.json", plan, indent=1)
    return plan


def print_plan_total(folders: Sequence[Path], since: float = 0.0) -> None:
    """After every job of a plan: the total over this invocation's plans (when there was more
    than one): the plans written since ``since`` in ``folders`` (``Launch.plan_dirs``)."""
    plans = [p for folder in folders for p in _read_plans(Path(folder), since)]
    if len(plans) >= 2:
        _print_total(plans, f"plan total over {len(plans)} jobs (run one after another):")


def _read_plans(folder: Path, since: float = 0.0) -> list[JobPlan]:
    """Every job plan (``*.json``) in ``folder`` (written since ``since``); one that is not JSON
    stops with its path."""
    plans = []
    for path in sorted(folder.glob("*.json")):
        if since and path.stat().st_mtime < since:
            continue
        try:
            plans.append(
                cast(JobPlan, json.loads(path.read_text()))
            )  # json: Any; written by report_plan
        except (OSError, ValueError) as exc:
            sys.exit(f"recallbench plan: {path}: not a job plan written by plan=true ({exc})")
    return plans


def _print_total(plans: list[JobPlan], heading: str) -> None:
    rows: dict[tuple[str, str], PlanRow] = {}
    for plan in plans:
        for r in plan["rows"]:
            r = dict(r)
            key = (r.pop("model"), r.pop("task"))
            rows.setdefault(key, PlanRow()).add(PlanRow(**r))
    lines, _ = _table(rows)
    print(heading)
    print("\n".join(lines))
    print(f"  wall time ~{_wall(sum(p['wall_s'] for p in plans))}")
    sys.stdout.flush()


def total_main(argv: list[str] | None = None) -> None:
    """``python -m recallbench.cli.plan <folder>``: the total over every job plan a make target
    left in ``results/plans/<stamp>/`` (``make estimate-table-<x>``: a table whose jobs come
    from several invocations, e.g. one per dataset, gets one bill)."""
    args = sys.argv[1:] if argv is None else argv
    if not args:
        sys.exit("usage: python -m recallbench.cli.plan <results/runs/<tag>/<stamp>/plan> ...")
    plans = [p for folder in args for p in _read_plans(Path(folder))]
    where = " ".join(args)
    if not plans:
        sys.exit(f"recallbench plan: no job plans (*.json) in {where}")
    _print_total(plans, f"plan total over the {len(plans)} jobs of {where}:")


def describe_llm(llm: LLMClient) -> str:
    """``backend:model @ endpoint`` of an LLM, for one line of a plan."""
    endpoint = llm.backend.endpoint
    return f"{llm.backend.name}:{llm.model}" + (f" @ {endpoint}" if endpoint else "")


if __name__ == "__main__":
    total_main()
