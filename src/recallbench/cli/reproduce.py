"""``recallbench reproduce <target>``: what a paper table needs, then the table (one make rule).

The experiment files ``conf/experiment/*.yaml`` are the one list of targets. Every
``make reproduce-*`` and ``make attribution-*`` goes through a pattern rule that calls this
command with the target's name; ``make tables``, ``make attribution``, ``make help`` and
``tests/golden/golden.py`` read their lists through ``cli/targets.py``.

A target (``cli/targets.py`` names them) runs, in order:

1. ``reproduce.needs``: targets whose runs it reads; each is made first (through ``make``, so its
   own steps apply) when ``<results>/runs/<its experiment>`` holds no run yet;
2. ``reproduce.commands``: scripts, run with this Python (``[scripts/x.py, --out, ...]``);
3. the sweeps: ``reproduce.sweeps`` (each a list of Hydra overrides, or
   ``{experiment: <other>, args: [...]}``), else the experiment's own sweep when it has one
   (``hydra.mode: MULTIRUN``), as ``recallbench [-m] experiment=<x> [judge=<JUDGE>] <sweep args>
   <generator args> <ARGS>`` (``judge=`` only when the experiment composes a judge;
   ``reproduce.judge`` fixes it, ``false`` leaves it out); a job whose finished run matches
   (config, code, packages, data) is reused, ``--rerun`` (``make ... RERUN=1``) runs every job
   again;
4. a table that reads another experiment's runs (``table.runs: <y>``) makes ``y``'s target first
   when ``<results>/runs/<y>`` holds no run yet;
5. the tables: ``recallbench-table <x> [<y>...] <generator args>`` (``reproduce.tables``, else the
   experiment's own; plus ``ARGS`` when it has no sweep and reads no runs: then ``ARGS`` are the
   table's own overrides, e.g. an LLM rater's model).

Sweep and command arguments may name ``{data_dir}``, ``{results}`` and the data folders of
:data:`SETTINGS` (``{cc_data}``, ``{lamp1_data}``, ``{answer_key}``); a literal ``${...}`` for
Hydra is written ``\\${...}`` (the experiment is also composed by OmegaConf). The ``reproduce:``
block is not part of a run's identity (``run.record.NOT_IDENTITY``): it says how make drives an
experiment, not what a run computes. ``reproduce.lists`` puts the target in ``make tables``
(``tables``: runs here on the data), ``make attribution`` or ``make golden`` (``golden``, with the
extra overrides ``reproduce.golden_args``); a paper experiment in no list says why in
``reproduce.why_not`` (tests/cli/test_reproduce.py). ``--dry-run`` prints the steps.

Each step runs as its own process, except a step with nothing to do: a sweep whose command
finished before as is, tables rendered from unchanged inputs. Those this process answers
(``answered``), so a warm target costs one Python start-up. The planner (``steps``) returns
typed steps (:class:`Step`: make, script, sweep or table) and that decision is made on them;
a step's command line is built from it only to print and run it.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from recallbench import CONF_DIR
from recallbench.cli.targets import (
    PAPER_TABLE,
    Target,
    block_of,
    experiment_of,
    group,
    listing,
    read_experiment,
    target_of,
    targets,
)
from recallbench.errors import ConfigError

__all__ = [
    "PAPER_TABLE",
    "SETTINGS",
    "Step",
    "Target",
    "answered",
    "block_of",
    "experiment_of",
    "group",
    "listing",
    "reproduce_main",
    "settings",
    "steps",
    "target_of",
    "targets",
]

CLI = [sys.executable, "-m", "recallbench.cli"]  # a step of the project's own command line

# Data folders the sweeps name: the make variable of the same name (``CC_DATA_DIR=...`` reaches
# here as ``--set cc_data=...``) when set, else the data folder when it holds the file, else the
# fallback (relative to the checkout). Conversation Chronicles lives only on the Hub; LaMP-1's
# labelled dev split likewise (the fallback is the synthetic scripts/make_lamp1_fixture.py one).
SETTINGS: dict[str, tuple[str, str]] = {
    "cc_data": ("conversation_chronicles/*.jsonl", "data/fixtures"),
    "lamp1_data": ("lamp1/user/LaMP_1/dev_outputs.json", "data/fixtures/lamp1_topics"),
}


def _sweeps(data: Mapping[str, Any]) -> bool:
    return str((data.get("hydra") or {}).get("mode", "")).upper() == "MULTIRUN"


def _has_judge(data: Mapping[str, Any]) -> bool:
    for entry in data.get("defaults") or []:
        keys = entry.keys() if isinstance(entry, dict) else [entry]
        if any(str(k).split(" ")[-1].lstrip("/").split("@")[0] == "judge" for k in keys):
            return True
    return False


def _has_runs(results: Path, tag: str) -> bool:
    return any(p.is_dir() for p in (results / "runs" / tag).glob("*/*"))


def settings(given: Mapping[str, str], data_dir: Path, results: Path) -> dict[str, str]:
    """The values of the placeholders (``{cc_data}`` ...): ``given`` first, then :data:`SETTINGS`."""
    out = {"data_dir": str(data_dir), "results": str(results)}
    for name, (probe, fallback) in SETTINGS.items():
        value = given.get(name) or (str(data_dir) if glob.glob(str(data_dir / probe)) else "")
        out[name] = str(Path(value or fallback).absolute())  # fallback: the checkout's
    key = given.get("answer_key")
    out["answer_key"] = str(Path(key).absolute()) if key else "default"
    return out


def _fill(words: list[Any], values: Mapping[str, str], where: str) -> list[str]:
    out = []
    for word in words:
        text = str(word)
        try:
            text = re.sub(r"(?<!\\)\{(\w+)\}", lambda m: values[m[1]], text)
        except KeyError as exc:
            known = ", ".join(f"{{{k}}}" for k in values)
            expected = f"(expected one of {known})"
            raise ConfigError(
                f"{where}: unknown placeholder {{{exc.args[0]}}} in {word!r} {expected}"
            ) from None
        out.append(text.replace("\\$", "$"))
    return out


@dataclass(frozen=True)
class Step:
    """One step of a target, as planned: what it is and its words, from which its command line
    (:attr:`argv`) is built. Whether this process can answer it (:func:`answered`) is decided
    on these fields, never on the command line read back.

    Kinds: ``make`` (``words``: make and the target whose runs are missing), ``script``
    (``words``: a script and its arguments, run with this Python), ``sweep`` (``words``: the
    Hydra overrides; ``multirun``: ``-m``) and ``table`` (``words``: experiments and overrides).
    """

    kind: Literal["make", "script", "sweep", "table"]
    words: tuple[str, ...]
    multirun: bool = False

    @property
    def argv(self) -> list[str]:
        """The command line that runs this step as its own process."""
        if self.kind == "make":
            return list(self.words)
        if self.kind == "script":
            return [sys.executable, *self.words]
        head = ["table"] if self.kind == "table" else ["-m"] if self.multirun else []
        return [*CLI, *head, *self.words]


def steps(
    target: str,
    *,
    results: Path,
    gen_args: list[str],
    args: list[str],
    judge: str,
    make: list[str],
    conf_dir: Path = CONF_DIR,
    values: Mapping[str, str] | None = None,
) -> list[Step]:
    """The steps ``target`` runs, in order (see the module docstring)."""
    known = targets(conf_dir)
    chosen = known.get(target) or Target(target, experiment_of(target), "")
    experiment = chosen.experiment
    data = read_experiment(experiment, conf_dir)
    block, table = block_of(data), data.get("table") or {}
    where = f"conf/experiment/{experiment}.yaml reproduce"
    values = dict(
        values or settings({}, Path(os.environ.get("RECALLBENCH_DATA_DIR", "data")), results)
    )
    out: list[Step] = []
    for need in block.get("needs") or []:
        if need not in known:
            raise ConfigError(f"{where}.needs: {need} is no target (make reproduce-list)")
        if not _has_runs(results, known[need].experiment):
            out.append(Step("make", (*make, need)))
    for command in block.get("commands") or []:
        out.append(Step("script", tuple(_fill(command, values, f"{where}.commands"))))
    sweeps = block.get("sweeps")
    for sweep in ([[]] if _sweeps(data) else []) if sweeps is None else sweeps:
        spec = sweep if isinstance(sweep, dict) else {"args": sweep}
        name = str(spec.get("experiment", experiment))
        swept = data if name == experiment else read_experiment(name, conf_dir)
        fixed = chosen.judge or block.get("judge")
        judged = [f"judge={fixed or judge}"] if fixed is not False and _has_judge(swept) else []
        extra = _fill(spec.get("args") or [], values, f"{where}.sweeps")
        words = (f"experiment={name}", *judged, *extra, *gen_args, *args)
        out.append(Step("sweep", words, multirun=_sweeps(swept)))
    runs = table.get("runs")
    if isinstance(runs, str) and runs != experiment and not _has_runs(results, runs):
        out.append(Step("make", (*make, target_of(runs))))
    own = [] if sweeps or _sweeps(data) or runs else args
    if "plan=true" in args:  # make estimate-table-*: a plan renders no table
        return out
    rendered = [str(t) for t in block.get("tables") or [experiment]]
    out.append(Step("table", (*rendered, *gen_args, *own)))
    return out


def reproduce_main(argv: list[str] | None = None) -> None:
    """``recallbench reproduce <target> [--gen ARGS] [--args ARGS] [--judge NAME] [--dry-run]``."""
    parser = argparse.ArgumentParser(prog="recallbench reproduce", description=__doc__)
    parser.add_argument("target", nargs="?", help="a target of make reproduce-list")
    parser.add_argument("--list", action="store_true", help="every target and its table's title")
    parser.add_argument("--group", help="the targets of a list (tables, attribution, golden)")
    parser.add_argument("--gen", default="", help="generator overrides (the Makefile's GEN_ARGS)")
    parser.add_argument("--args", default="", help="other Hydra overrides (the Makefile's ARGS)")
    parser.add_argument("--judge", default="lexical", help="judge of experiments that have one")
    parser.add_argument("--make", default="make", help="how to call make for a missing run")
    names = ", ".join(SETTINGS)
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help=f"a data folder the sweeps name ({names}, answer_key); empty: default",
    )
    parser.add_argument("--dry-run", action="store_true", help="print the steps only")
    parser.add_argument(
        "--rerun", action="store_true", help="run every job again (finished runs are reused)"
    )
    ns = parser.parse_args(argv)
    if ns.rerun:  # the steps' environment: their sweeps run every job again
        from recallbench.run.resume import RERUN_ENV

        os.environ[RERUN_ENV] = "1"
    try:
        if ns.list:
            for target, title in listing():
                print(f"{target:34} {title}")
            return
        if ns.group:
            print(" ".join(group(ns.group)))
            return
        if ns.target is None:
            parser.error("name a target, e.g. reproduce-table-lufy-3 (or --list)")
        results = Path(os.environ.get("RECALLBENCH_RESULTS_DIR", "results"))
        data_dir = Path(os.environ.get("RECALLBENCH_DATA_DIR", "data/downloaded"))
        given = dict(s.split("=", 1) for s in ns.set if "=" in s)
        planned = steps(
            ns.target,
            results=results,
            gen_args=shlex.split(ns.gen),
            args=shlex.split(ns.args),
            judge=ns.judge,
            make=shlex.split(ns.make),
            values=settings(given, data_dir, results),
        )
    except ConfigError as exc:
        sys.exit(f"recallbench reproduce: {exc}")
    for step in planned:
        print("+ " + shlex.join(step.argv), flush=True)
        if ns.dry_run or answered(step):
            continue
        if code := subprocess.run(step.argv, check=False).returncode:
            sys.exit(code)


def answered(step: Step) -> bool:
    """Answer a step that has nothing to do in this process, printing what it would print: a
    sweep whose command finished before as is (``cli.reuse.replayed``), tables rendered from
    unchanged inputs (``cli.table.cached_tables``). Anything else (make, a script, a plan, a
    flag, work to do) runs as its own process. A warm target thus costs one Python start-up,
    not one per step (issue 38: ``make tables`` warm)."""
    if step.kind not in ("sweep", "table") or any(
        w.startswith("-") or w.partition("=")[0] in ("plan", "plan_latency_s") for w in step.words
    ):
        return False
    if step.kind == "table":
        from recallbench.cli.table import cached_tables

        files = cached_tables(list(step.words))
        for path in files or []:
            print(path, flush=True)
        return files is not None
    from recallbench.cli.reuse import replayed

    done = replayed(["-m", *step.words] if step.multirun else list(step.words))
    sys.stdout.flush()
    return done
