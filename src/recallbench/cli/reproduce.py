"""``recallbench reproduce <target>``: what a paper table needs, then the table (one make rule).

``make reproduce-table-<paper>-<n>`` and ``make reproduce-figure-<paper>-<n>`` go through one
pattern rule that calls this command with the target's name. The experiment
``conf/experiment/<paper>_table<n>.yaml`` (``_figure<n>``) already says what its table needs:

1. an experiment with its own sweep (``hydra.mode: MULTIRUN``) runs it:
   ``recallbench -m experiment=<x> [judge=<JUDGE>] <generator args> <ARGS>`` (``judge=`` only when
   the experiment composes a judge); a job whose finished run matches (config, code, packages,
   data) is reused, ``--rerun`` (``make ... RERUN=1``) runs every job again;
2. a table that reads another experiment's runs (``table.runs: <y>``) makes ``y``'s target first
   when ``<results>/runs/<y>`` holds no run yet (through ``make``, so ``y``'s own rule applies);
3. the table is rendered: ``recallbench-table <x> <generator args>`` (plus ``ARGS`` when the table
   reads no runs: then ``ARGS`` are the table's own overrides, e.g. an LLM rater's model).

Experiments whose reproduction is not this (two datasets in one table, a fitting script, several
tables from one sweep, a data folder of their own) keep an explicit rule in the Makefile, which
make prefers to the pattern. ``--dry-run`` prints the steps instead of running them.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from recallbench import CONF_DIR
from recallbench.errors import ConfigError

__all__ = ["experiment_of", "listing", "plan", "reproduce_main", "target_of"]

TARGET = re.compile(r"^reproduce-(table|figure)-([a-z]+)-(\d+)$")


def experiment_of(target: str) -> str:
    """``reproduce-table-lufy-11`` -> ``lufy_table11`` (``reproduce-figure-timerag-3`` -> ...)."""
    match = TARGET.match(target)
    if match is None:
        raise ConfigError(
            f"{target}: expected reproduce-table-<paper>-<n> or reproduce-figure-<paper>-<n>"
        )
    kind, paper, number = match.groups()
    return f"{paper}_{kind}{number}"


def target_of(experiment: str) -> str:
    """``lufy_table11`` -> ``reproduce-table-lufy-11`` (the inverse of :func:`experiment_of`)."""
    match = re.match(r"^([a-z]+)_(table|figure)(\d+)$", experiment)
    if match is None:
        raise ConfigError(f"{experiment}: expected <paper>_table<n> or <paper>_figure<n>")
    paper, kind, number = match.groups()
    return f"reproduce-{kind}-{paper}-{number}"


def _read(experiment: str, conf_dir: Path) -> dict[str, Any]:
    path = conf_dir / "experiment" / f"{experiment}.yaml"
    if not path.is_file():
        raise ConfigError(f"{path}: no such experiment (make reproduce-* names conf/experiment/)")
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    return data


def _sweeps(data: dict[str, Any]) -> bool:
    return str((data.get("hydra") or {}).get("mode", "")).upper() == "MULTIRUN"


def _has_judge(data: dict[str, Any]) -> bool:
    for entry in data.get("defaults") or []:
        keys = entry.keys() if isinstance(entry, dict) else [entry]
        if any(str(k).split(" ")[-1].lstrip("/").split("@")[0] == "judge" for k in keys):
            return True
    return False


def _has_runs(results: Path, tag: str) -> bool:
    return any(p.is_dir() for p in (results / "runs" / tag).glob("*/*"))


def plan(
    target: str,
    *,
    results: Path,
    gen_args: list[str],
    args: list[str],
    judge: str,
    make: list[str],
    conf_dir: Path = CONF_DIR,
) -> list[list[str]]:
    """The commands ``target`` runs, in order (see the module docstring)."""
    experiment = experiment_of(target)
    data = _read(experiment, conf_dir)
    table = data.get("table") or {}
    cli = [sys.executable, "-m", "recallbench.cli"]
    steps: list[list[str]] = []
    if _sweeps(data):
        judged = [f"judge={judge}"] if _has_judge(data) else []
        steps.append([*cli, "-m", f"experiment={experiment}", *judged, *gen_args, *args])
    runs = table.get("runs")
    if isinstance(runs, str) and runs != experiment and not _has_runs(results, runs):
        steps.append([*make, target_of(runs)])
    own = [] if _sweeps(data) or runs else args
    steps.append([*cli, "table", experiment, *gen_args, *own])
    return steps


def listing(conf_dir: Path = CONF_DIR) -> list[tuple[str, str]]:
    """(target, title) of every experiment with a paper table or figure, in name order."""
    out = []
    for path in sorted((conf_dir / "experiment").glob("*.yaml")):
        if not re.match(r"^[a-z]+_(table|figure)\d+$", path.stem):
            continue
        table = _read(path.stem, conf_dir).get("table") or {}
        if table:
            out.append((target_of(path.stem), str(table.get("title", ""))))
    return out


def reproduce_main(argv: list[str] | None = None) -> None:
    """``recallbench reproduce <target> [--gen ARGS] [--args ARGS] [--judge NAME] [--dry-run]``."""
    parser = argparse.ArgumentParser(prog="recallbench reproduce", description=__doc__)
    parser.add_argument(
        "target", nargs="?", help="reproduce-table-<paper>-<n> | reproduce-figure-<paper>-<n>"
    )
    parser.add_argument("--list", action="store_true", help="every target and its table's title")
    parser.add_argument("--gen", default="", help="generator overrides (the Makefile's GEN_ARGS)")
    parser.add_argument("--args", default="", help="other Hydra overrides (the Makefile's ARGS)")
    parser.add_argument("--judge", default="lexical", help="judge of experiments that have one")
    parser.add_argument("--make", default="make", help="how to call make for a missing run")
    parser.add_argument("--dry-run", action="store_true", help="print the steps only")
    parser.add_argument(
        "--rerun", action="store_true", help="run every job again (finished runs are reused)"
    )
    ns = parser.parse_args(argv)
    if ns.rerun:  # the steps' environment: their sweeps run every job again
        from recallbench.run.resume import RERUN_ENV

        os.environ[RERUN_ENV] = "1"
    if ns.list:
        for target, title in listing():
            print(f"{target:34} {title}")
        return
    if ns.target is None:
        parser.error("name a target, e.g. reproduce-table-lufy-3 (or --list)")
    results = Path(os.environ.get("RECALLBENCH_RESULTS_DIR", "results"))
    try:
        steps = plan(
            ns.target,
            results=results,
            gen_args=shlex.split(ns.gen),
            args=shlex.split(ns.args),
            judge=ns.judge,
            make=shlex.split(ns.make),
        )
    except ConfigError as exc:
        sys.exit(f"recallbench reproduce: {exc}")
    for step in steps:
        print("+ " + shlex.join(step), flush=True)
        if not ns.dry_run and (code := subprocess.run(step, check=False).returncode):
            sys.exit(code)
