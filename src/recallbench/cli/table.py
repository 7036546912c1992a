"""``recallbench-table``: render an experiment's paper table (or figure) from its runs or data.

``python -m recallbench.cli table ...`` is the same command (the Makefile's spelling, which
works from a source checkout whose console scripts are not reinstalled).
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from omegaconf import DictConfig, OmegaConf

from recallbench.cli.build import (
    build_caim_judge,
    build_embedder,
    build_generator,
    build_judge,
    plain,
)
from recallbench.cli.config import compose_job, user_errors
from recallbench.errors import ConfigError
from recallbench.store import reach_store

if TYPE_CHECKING:
    from recallbench.embed import TextEmbedder
    from recallbench.judges import Judge
    from recallbench.judges.caim import CaimJudge
    from recallbench.llm import LLM
    from recallbench.tables import TableSpec


class TableServices(TypedDict):
    """The model factories of a ``tables.TableContext`` (its ``make_*`` fields)."""

    make_llm: Callable[[], LLM]
    make_judge: Callable[[], Judge]
    make_caim_judge: Callable[..., CaimJudge]
    make_embedder: Callable[..., TextEmbedder]


def table_services(cfg: DictConfig) -> TableServices:
    """Return the model factories a table builder may call, from the composed config."""
    cache_dir = Path(cfg.paths.cache_dir)

    def make_llm() -> LLM:
        return build_generator(cfg.generator, cache_dir / "llm.sqlite")

    def make_judge() -> Judge:
        if cfg.get("judge") is None:
            raise ConfigError("this table needs a judge: add judge=<name> (conf/judge)")
        return build_judge(cfg.judge, make_llm())

    return {
        "make_llm": make_llm,
        "make_judge": make_judge,
        "make_caim_judge": build_caim_judge,
        "make_embedder": build_embedder,
    }


def composed_spec(experiment: str, overrides: list[str]) -> tuple[TableSpec, DictConfig]:
    """The ``table:`` block of ``experiment`` composed with ``overrides``, and the config."""
    from recallbench.tables import load_spec

    cfg, _ = compose_job([f"experiment={experiment}", *overrides])
    table = cfg.get("table")
    spec = load_spec(
        experiment, None if table is None else OmegaConf.to_container(table, resolve=True)
    )
    return spec, cfg


def render_table(experiment: str, overrides: list[str]) -> dict[str, Path]:
    """Compose ``experiment`` with ``overrides`` and render its table; return the files."""
    from recallbench.tables import TableContext, reproduce

    spec, cfg = composed_spec(experiment, overrides)
    ctx = TableContext(
        results_dir=Path(cfg.paths.results_dir),
        data_dir=Path(cfg.paths.data_dir),
        config=plain(cfg),
        **table_services(cfg),
    )
    return reproduce(spec, ctx)


def check_tables(experiments: list[str], overrides: list[str]) -> int:
    """Say, for each experiment's rendered table, whether it names the newest matching runs
    (``tables.staleness``); return the exit code: 1 when one is stale or missing, else 0."""
    from recallbench.tables.staleness import check_table

    stale = 0
    for experiment in experiments:
        with user_errors("recallbench-table --check"):
            spec, cfg = composed_spec(experiment, overrides)
            found = check_table(spec, Path(cfg.paths.results_dir))
        print(found.describe())
        if found.stale:
            stale += 1
            print(f"  render it again: recallbench-table {experiment}")
    if stale:
        print(f"{stale} of {len(experiments)} table(s) do not name the newest runs")
    return 1 if stale else 0


def table_main(argv: list[str] | None = None) -> None:
    """Console entry point ``recallbench-table``: render experiments' paper tables."""
    import argparse

    from recallbench.run.sources import watch

    parser = argparse.ArgumentParser(
        prog="recallbench-table",
        description="Render the paper table (or figure) of conf/experiment/<EXPERIMENT>.yaml "
        "from its runs or data into <results>/tables/<paper>_<id>.{md,tex,csv}.",
    )
    parser.add_argument("args", nargs="*", metavar="EXPERIMENT | KEY=VALUE")
    parser.add_argument("--results", help="results folder (default: paths.results_dir)")
    parser.add_argument("--verbose", action="store_true", help="show tracebacks of user errors")
    parser.add_argument(
        "--check",
        action="store_true",
        help="render nothing: say whether each rendered table names the newest matching runs "
        "(exit 1 when one does not)",
    )
    parser.add_argument(
        "--group", help="with --check: the tables of a make list (tables, attribution, golden)"
    )
    ns = parser.parse_intermixed_args(argv)
    if ns.verbose:
        os.environ["RECALLBENCH_VERBOSE"] = "1"
    experiments, overrides = _split(ns.args)
    if ns.group and not ns.check:
        parser.error("--group goes with --check")
    if ns.group:
        from recallbench.cli.targets import group_tables

        with user_errors("recallbench-table --check"):
            experiments += group_tables(ns.group)
    if not experiments:
        parser.error("name at least one experiment (conf/experiment/<name>.yaml)")
    if ns.results:
        overrides.append(f"paths.results_dir={ns.results}")
    if ns.check:
        sys.exit(check_tables(experiments, overrides))
    watch()  # the files it reads key the rendered table (``rendered_before``)
    with user_errors("recallbench-table"):  # before any work: the models a table runs use it
        for given in (o for o in overrides if o.startswith("store=")):
            argv_ = sys.argv[1:] if argv is None else argv
            reach_store(given.split("=", 1)[1], shlex.join(["recallbench-table", *argv_]))
    for experiment in experiments:
        with user_errors("recallbench-table"):
            files = rendered_before(experiment, overrides)
            if files is None:
                from recallbench.analysis.runs import reading_runs

                with reading_runs() as reads:
                    files = render_table(experiment, overrides)
                remember_render(experiment, overrides, files, reads)
        for path in files.values():
            print(path)


def _split(args: list[str]) -> tuple[list[str], list[str]]:
    """(experiments, overrides) of the command's words."""
    overrides = [a for a in args if "=" in a or a.startswith(("~", "+"))]
    return [a for a in args if a not in overrides], overrides


def cached_tables(args: list[str]) -> list[Path] | None:
    """The files ``recallbench-table <args>`` would print when every table it names is as
    rendered from unchanged inputs (``rendered_before``); None: run the command (a table to
    render, a flag, anything unusual). ``recallbench reproduce`` answers a warm step with it."""
    experiments, overrides = _split(args)
    if not experiments or any(a.startswith("-") for a in args):
        return None
    found: list[Path] = []
    for experiment in experiments:
        try:
            files = rendered_before(experiment, overrides)
        except (ConfigError, OSError, ValueError):  # the command itself says what is wrong
            return None
        if files is None:
            return None
        found += files.values()
    return found


# A table is a function of its spec, the code, the run folders and data it reads: when none of
# them changed since it was rendered (the code: every project module its process imported and
# file it read, ``run.sources``, so a docs commit does not render it again) (and its files are as written), rendering again (imports,
# paired bootstrap tests: seconds to minutes) would write the same bytes. The run folders are
# those it listed while rendering (``analysis.runs.reading_runs``: ``results/runs/<tag>``, all of
# ``results/runs``, or a folder ``table.runs`` names), so the runs of other experiments that
# ``make tables`` adds after it do not render it again. Not inputs: results/cache (SQLite), hydra
# logs, plans, and the tables themselves (checked by sha256); every other top folder of the
# results (fits/, human/ ...) is.
NOT_INPUTS = ("cache", "tables", "hydra", "plans")


def _run_files(folder: Path, results: Path) -> list[Path]:
    """The files a table may read of the runs listed in ``folder``: of each run folder its own
    files (run.json, summary, scores, predictions ...), which change whenever the run does, not
    its per-episode items/, memory/ and episodes/ (thousands per sweep); a tag's plan.json."""
    runs = results / "runs"
    if folder == runs:  # runs/<tag>/plan.json (a matrix), runs/<tag>/<stamp>/<job>/*
        return [*folder.glob("*/*"), *folder.glob("*/*/*/*")]
    if folder.parent == runs:
        return [*folder.glob("*"), *folder.glob("*/*/*")]
    from recallbench.analysis.runs import run_folders

    return [f for run in run_folders(folder) for f in run.iterdir()]


def _result_files(results: Path, reads: Iterable[str]) -> list[str]:
    """The files a table that listed the run folders ``reads`` may read: theirs
    (``_run_files``) and everything else in ``results`` but ``NOT_INPUTS`` and runs/."""
    found: list[Path] = []
    for top in sorted(results.iterdir()) if results.is_dir() else []:
        if top.name != "runs" and top.name not in NOT_INPUTS:
            found += [top, *top.rglob("*")] if top.is_dir() else [top]
    for folder in sorted(set(reads)):
        found += _run_files(Path(folder), results)
    return sorted({str(p) for p in found if p.is_file()})


def _render_key(experiment: str, overrides: list[str]) -> tuple[Path, Path, dict[str, Any]]:
    """(record file, results folder, the inputs but the results' and the code's) of a table."""
    from recallbench.cli.reuse import command_key, fingerprint, results_dir

    results = results_dir(overrides)
    inputs = {"data": fingerprint([str(_data_dir(overrides).resolve())])}
    key = command_key([experiment, *overrides])
    return results / "cache" / "tables" / f"{experiment}-{key}.json", results.resolve(), inputs


def _data_dir(overrides: list[str]) -> Path:
    given = [o.split("=", 1)[1] for o in overrides if o.startswith("paths.data_dir=")]
    return Path(given[-1] if given else os.environ.get("RECALLBENCH_DATA_DIR", "data/downloaded"))


def _inputs(base: dict[str, Any], results: Path, reads: Iterable[str]) -> dict[str, Any]:
    from recallbench.cli.reuse import fingerprint

    reads = sorted(set(reads))
    return {**base, "reads": reads, "results": fingerprint(_result_files(results, reads))}


def _sha256(path: Path) -> str | None:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def rendered_before(experiment: str, overrides: list[str]) -> dict[str, Path] | None:
    """The table files of ``experiment`` when nothing it reads changed since they were
    rendered (the code it ran: ``run.resume.same_code``) and they are as written (None: render
    it); ``RECALLBENCH_RERUN`` renders."""
    import json

    from recallbench.run.resume import rerun_asked, same_code

    found = None if rerun_asked() else _render_key(experiment, overrides)
    if found is None or not found[0].is_file():
        return None
    record = json.loads(found[0].read_text(encoding="utf-8"))
    if not same_code(record.get("code")):
        return None
    files = {k: Path(v) for k, v in (record.get("files") or {}).items()}
    recorded = record.get("inputs") or {}
    same = files and recorded == _inputs(found[2], found[1], recorded.get("reads") or ())
    if not same or any(_sha256(p) != record["sha256"].get(k) for k, p in files.items()):
        return None
    return files


def remember_render(
    experiment: str, overrides: list[str], files: dict[str, Path], reads: Iterable[str]
) -> None:
    """Record what ``experiment``'s table files were rendered from (``rendered_before``):
    the code this process ran and read, data, and the run folders ``reads`` it listed
    (``analysis.runs.reading_runs``)."""
    from recallbench.cli.reuse import code_identity
    from recallbench.io import write_json

    found = _render_key(experiment, overrides)
    record = {
        "code": code_identity([str(_data_dir(overrides))], [found[1]]),
        "inputs": _inputs(found[2], found[1], reads),
        "files": {k: str(p) for k, p in files.items()},
        "sha256": {k: _sha256(p) for k, p in files.items()},
    }
    write_json(found[0], record)
