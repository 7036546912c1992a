"""``recallbench-matrix``: every memory method on every paper's setting, then the matrix tables.

    python -m recallbench.cli.matrix [--plan-only] [--settings KEY,..] [--methods NAME,..]
        [--episodes N] [--skip NAME,.. --why TEXT] [KEY=VALUE ...]

Reads the ``matrix:`` block of ``conf/experiment/matrix.yaml`` (``cli.matrix_plan``), plans
every (setting, method) cell (runnable, or unavailable with the reason derived from what the
method and protocol need and what the sampled data provides), runs the runnable cells one by
one in this process (each dataset loaded and sampled once for all its methods), and renders
the table experiments the block lists (``tables.matrix``). The plan, with each cell's status
(``unavailable``, ``finished``, ``failed`` and why), is ``<results>/runs/<tag>/plan.json``:
the tables read it to mark the cells that have no run. KEY=VALUE overrides go to every job
(``paths.data_dir=...``, ``generator=openai``). ``--episodes N`` (or ``episodes=N``, which
``make matrix EPISODES=N`` passes) samples N episodes in every setting that does not fix its
own. ``--skip`` plans the methods it names but runs none of their cells: they read "n/a: not
run" with ``--why`` in the notes (a method that takes hours here), also where an earlier
command finished them (a command without ``--skip`` reuses those runs). A cell that raises is recorded as failed with its error line and the matrix goes on.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

from omegaconf import DictConfig

from recallbench.cli import run
from recallbench.cli.build import (
    build_dataset,
    build_embedder,
    build_generator,
    build_memory_factory,
    build_protocol,
    plain,
)
from recallbench.cli.checks import check_config
from recallbench.cli.config import compose_job, select_episodes, user_errors
from recallbench.cli.matrix_plan import (
    Cell,
    Method,
    Plan,
    PlanSetting,
    Setting,
    compose_checked,
    matrix_block,
    methods_of,
    portable_reason,
    setting_entry,
    settings_of,
    skip,
)
from recallbench.cli.table import render_table
from recallbench.datasets.needs import missing, provided
from recallbench.errors import (
    ConfigError,
    DataNotFoundError,
    DatasetFormatError,
    UnknownChoiceError,
    one_line,
)
from recallbench.io import write_json
from recallbench.records import JSON, Episode
from recallbench.run.sweep import STAMP_ENV, new_stamp
from recallbench.store import reach_store

__all__ = ["job_overrides", "matrix_main", "plan_matrix", "plan_path", "run_matrix"]

EXPERIMENT = "matrix"
T = TypeVar("T")


def plan_path(results_dir: str | Path, tag: str) -> Path:
    """Where the plan of the matrix with ``tag`` is written."""
    return Path(results_dir) / "runs" / tag / "plan.json"


def job_overrides(setting: Setting, method: str, tag: str, extra: Sequence[str]) -> list[str]:
    """The overrides of the job of one cell."""
    episodes = "null" if setting.episodes is None else str(setting.episodes)
    return [
        *setting.overrides,
        f"memory={method}",
        f"episodes={episodes}",
        f"tag={tag}",
        f"job={setting.key}-{method}",
        *extra,
    ]


def _plan_setting(
    setting: Setting, methods: Sequence[Method], tag: str, extra: Sequence[str]
) -> tuple[PlanSetting, dict[str, Cell], list[Episode]]:
    """Plan one column: its entry, each method's cell, and its sampled episodes."""
    cfg, choices = compose_checked(job_overrides(setting, methods[0].memory, tag, extra))
    entry = setting_entry(setting, cfg, choices)
    cells: dict[str, Cell] = {}
    try:
        episodes = select_episodes(build_dataset(cfg.dataset), cfg.episodes, int(cfg.seed))
    except (DataNotFoundError, DatasetFormatError) as exc:
        absent = f"no data: {portable_reason(one_line(exc), cfg)}"
        entry["facts"], entry["episodes"] = [], 0
        return entry, {m.memory: {"status": "unavailable", "reason": absent} for m in methods}, []
    facts = provided(episodes)
    entry["facts"], entry["episodes"] = sorted(facts), len(episodes)
    llm = build_generator(cfg.generator, None)
    embedder = build_embedder({"_target_": "recallbench.embed.hashing.HashingEmbedder"})
    protocol = build_protocol(cfg.protocol, int(cfg.seed), llm, embedder, None)
    try:  # a metric its protocol cannot report: the column is refused before any run
        protocol.check_metrics(entry["metrics"])
    except UnknownChoiceError as exc:
        return entry, {m.memory: {"status": "unavailable", "reason": str(exc)} for m in methods}, []
    for m in methods:
        job_cfg, _ = compose_job(job_overrides(setting, m.memory, tag, extra))
        check_config(job_cfg)  # a wrong key fails before any run, naming it
        method = build_memory_factory(job_cfg.memory, llm, embedder)()
        lacking = missing(method.needs() | protocol.needs(), facts)
        reason: str | None = (
            f"needs {', '.join(lacking)} ({entry['dataset']} sample has none)"
            if lacking
            else protocol.refuses(method)
        )
        cells[m.memory] = {"status": "unavailable", "reason": reason} if reason else {}
        cells[m.memory]["job"] = f"{setting.key}-{m.memory}"
    return entry, cells, episodes


def plan_matrix(
    block: dict[str, JSON],
    tag: str,
    extra: Sequence[str],
    settings: Sequence[Setting],
    methods: Sequence[Method],
) -> tuple[Plan, dict[str, list[Episode]]]:
    """The plan (methods, settings, cells) and each setting's sampled episodes."""
    plan: Plan = {
        "tag": tag,
        "reference": str(block.get("reference") or methods[0].memory),
        "methods": [{"memory": m.memory, "label": m.label} for m in methods],
        "settings": [],
        "cells": {},
    }
    episodes: dict[str, list[Episode]] = {}
    for setting in settings:
        entry, cells, eps = _plan_setting(setting, methods, tag, extra)
        plan["settings"].append(entry)
        plan["cells"][setting.key] = cells
        episodes[setting.key] = eps
    return plan, episodes


def finished_run(
    cfg: DictConfig,
    job: str,
    choices: dict[str, str],
    overrides: list[str],
    episodes: list[Episode],
) -> Path | None:
    """The finished run the cell's job reuses, by the identity ``run`` checks
    (``run.resume.run_identity``: config hash, packages, the sampled episodes' sha256, and the
    code it ran unchanged: ``run.resume.same_code``), said on stderr as ``run`` says it; None: the cell runs."""
    from recallbench.cli.reuse import reused_run

    config = {**plain(cfg), "job": job, "choices": dict(choices), "overrides": list(overrides)}
    return reused_run(cfg, job, config, episodes, False)


def _run_cell(
    plan: Plan,
    cell: Cell,
    setting: Setting,
    memory: str,
    episodes: list[Episode],
    extra: Sequence[str],
    rerun: bool,
) -> None:
    overrides = job_overrides(setting, memory, plan["tag"], extra)
    started, cpu = time.monotonic(), time.process_time()
    try:
        cfg, choices = compose_job(overrides)
        done = None if rerun else finished_run(cfg, cell["job"], choices, overrides, episodes)
        if done is not None:  # the same cell finished before: make matrix resumes
            cell.update({"status": "finished", "run": str(done), "reused": True})
            return
        folder = run(cfg, cell["job"], choices, overrides, episodes=episodes, rerun=rerun)
        cell.update({"status": "finished", "run": str(folder)})
    except Exception as exc:  # one cell's error must not stop the matrix: record it
        cell.update({"status": "failed", "reason": f"failed: {one_line(exc)}"})
        print(f"recallbench-matrix: {cell['job']}: {cell['reason']}", file=sys.stderr)
    # wall-clock seconds, and this process's CPU seconds (what a shared machine's load does
    # not inflate; torch's threads count, so CPU seconds can exceed the wall clock)
    cell["seconds"] = round(time.monotonic() - started, 1)
    cell["cpu_seconds"] = round(time.process_time() - cpu, 1)


def run_matrix(
    plan: Plan,
    episodes: dict[str, list[Episode]],
    settings: Sequence[Setting],
    methods: Sequence[Method],
    extra: Sequence[str],
    path: Path,
    rerun: bool = False,
) -> None:
    """Run every planned cell, method by method (the reference first) over every setting, so
    an interrupted matrix has whole rows; a cell that finished before with the same config, code,
    packages and data is reused unless ``rerun``. Each outcome (and its seconds) goes to the plan file."""
    for m in methods:
        for setting in settings:
            cell = plan["cells"][setting.key][m.memory]
            if cell.get("status") == "unavailable":
                continue
            _run_cell(plan, cell, setting, m.memory, episodes[setting.key], extra, rerun)
            write_json(path, plan)


def _pick(items: Sequence[T], attr: str, wanted: str | None, what: str) -> list[T]:
    if not wanted:
        return list(items)
    names = set(wanted.split(","))
    if unknown := names - {getattr(i, attr) for i in items}:
        raise DataNotFoundError(f"--{what}: unknown {sorted(unknown)}")
    return [i for i in items if getattr(i, attr) in names]


def merged(old: Plan | None, new: Plan) -> Plan:
    """``new`` over an earlier plan of the same tag: a partial run (--settings, --methods)
    replaces the cells it planned and keeps the others (and their settings and methods)."""
    if not old or old.get("tag") != new["tag"]:
        return new
    methods = {m["memory"]: m for m in [*old["methods"], *new["methods"]]}
    settings = {s["key"]: s for s in [*old["settings"], *new["settings"]]}
    cells = {k: dict(v) for k, v in old["cells"].items()}
    for key, row in new["cells"].items():
        cells.setdefault(key, {}).update(row)
    return {
        **old,
        **new,
        "methods": list(methods.values()),
        "settings": list(settings.values()),
        "cells": cells,
    }


def reports_any(plan: Plan, table: str) -> bool:
    """Whether a setting of ``plan`` reports a metric of the table experiment ``table``
    (a quality-vs-cost table: its ``quality`` metrics)."""
    from recallbench.tables import load_spec

    spec = load_spec(table)
    wanted = set(spec.option("quality", None) or spec.metrics or ())
    return any(wanted & set(s["metrics"]) for s in plan["settings"])


def matrix_main(argv: list[str] | None = None) -> None:
    """Console entry point: plan, run and tabulate the cross-paper matrix."""
    from recallbench.run.sources import watch

    watch()  # the files its cells read key their runs (``run.sources``)
    parser = argparse.ArgumentParser(prog="recallbench-matrix", description=__doc__)
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE")
    parser.add_argument("--experiment", default=EXPERIMENT, help="the experiment with matrix:")
    parser.add_argument("--plan-only", action="store_true", help="write the plan, run nothing")
    parser.add_argument("--settings", help="only these setting keys (comma-separated)")
    parser.add_argument("--methods", help="only these methods (comma-separated)")
    parser.add_argument("--rerun", action="store_true", help="rerun cells that finished before")
    parser.add_argument("--skip", help="plan these methods (comma-separated), run none of them")
    parser.add_argument("--why", default="", help="with --skip: the reason the tables give")
    parser.add_argument(
        "--episodes",
        type=int,
        help="episodes sampled per setting (matrix.episodes; a setting's own episodes stay)",
    )
    ns = parser.parse_args(argv)
    with user_errors("recallbench-matrix"):
        for given in [o for o in ns.overrides if o.startswith("episodes=")]:  # make EPISODES=n
            ns.overrides.remove(given)
            value = given.split("=", 1)[1]
            if not value.isdigit():
                raise ConfigError(f"{given}: expected an integer >= 1 (episodes per setting)")
            ns.episodes = int(value)
        if ns.skip and not ns.why.strip():  # before the minute of planning
            raise ConfigError("--skip needs --why: the reason the tables give")
        if ns.episodes is not None and ns.episodes < 1:
            raise ConfigError(f"--episodes {ns.episodes}: expected an integer >= 1")
        cfg, _ = compose_checked([f"experiment={ns.experiment}", *ns.overrides])
        argv_ = sys.argv[1:] if argv is None else argv
        reach_store(str(cfg.get("store") or "sqlite"), shlex.join(["recallbench-matrix", *argv_]))
        where = f"conf/experiment/{ns.experiment}.yaml"
        block, tag = matrix_block(cfg, where), str(cfg.tag)
        if ns.episodes is not None:
            block["episodes"] = ns.episodes
        os.environ[STAMP_ENV] = new_stamp()  # the command's one stamp: every cell's
        settings = _pick(settings_of(block, where), "key", ns.settings, "settings")
        methods = _pick(methods_of(block, where), "memory", ns.methods, "methods")
        started, cpu = time.monotonic(), time.process_time()
        plan, episodes = plan_matrix(block, tag, ns.overrides, settings, methods)
        skipped = [m.memory for m in _pick(methods, "memory", ns.skip, "skip")] if ns.skip else []
        methods = [m for m in methods if m.memory not in skipped]
        path = plan_path(cfg.paths.results_dir, tag)
        plan["planned_s"] = round(time.monotonic() - started, 1)
        text = path.read_text(encoding="utf-8") if path.is_file() else None
        earlier: Plan | None = None if text is None else json.loads(text)  # written before
        plan = merged(earlier, plan)
        if skipped:  # planned, shown as not run with why, never run
            skip(plan, skipped, ns.why)
        write_json(path, plan)
        print(f"recallbench-matrix: plan {path}", file=sys.stderr)
        if ns.plan_only:
            return
        run_matrix(plan, episodes, settings, methods, ns.overrides, path, ns.rerun)
        plan["total_s"] = round(time.monotonic() - started, 1)
        plan["total_cpu_s"] = round(time.process_time() - cpu, 1)
        write_json(path, plan)
        for table in block.get("tables") or []:
            if not reports_any(plan, str(table)):
                print(f"recallbench-matrix: {table}: no planned setting reports its metrics")
                continue
            for file in render_table(str(table), list(ns.overrides)).values():
                print(file)


if __name__ == "__main__":
    matrix_main(sys.argv[1:])
