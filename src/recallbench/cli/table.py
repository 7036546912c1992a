"""``recallbench-table``: render an experiment's paper table (or figure) from its runs or data.

``python -m recallbench.cli table ...`` is the same command (the Makefile's spelling, which
works from a source checkout whose console scripts are not reinstalled).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

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

if TYPE_CHECKING:
    from recallbench.embed import TextEmbedder
    from recallbench.judges import Judge
    from recallbench.judges.caim import CaimJudge
    from recallbench.llm import LLM


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


def render_table(experiment: str, overrides: list[str]) -> dict[str, Path]:
    """Compose ``experiment`` with ``overrides`` and render its table; return the files."""
    from recallbench.tables import TableContext, load_spec, reproduce

    cfg, _ = compose_job([f"experiment={experiment}", *overrides])
    table = cfg.get("table")
    spec = load_spec(
        experiment, None if table is None else OmegaConf.to_container(table, resolve=True)
    )
    ctx = TableContext(
        results_dir=Path(cfg.paths.results_dir),
        data_dir=Path(cfg.paths.data_dir),
        config=plain(cfg),
        **table_services(cfg),
    )
    return reproduce(spec, ctx)


def table_main(argv: list[str] | None = None) -> None:
    """Console entry point ``recallbench-table``: render experiments' paper tables."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="recallbench-table",
        description="Render the paper table (or figure) of conf/experiment/<EXPERIMENT>.yaml "
        "from its runs or data into <results>/tables/<paper>_<id>.{md,tex,csv}.",
    )
    parser.add_argument("args", nargs="+", metavar="EXPERIMENT | KEY=VALUE")
    parser.add_argument("--results", help="results folder (default: paths.results_dir)")
    parser.add_argument("--verbose", action="store_true", help="show tracebacks of user errors")
    ns = parser.parse_intermixed_args(argv)
    if ns.verbose:
        os.environ["RECALLBENCH_VERBOSE"] = "1"
    overrides = [a for a in ns.args if "=" in a or a.startswith(("~", "+"))]
    experiments = [a for a in ns.args if a not in overrides]
    if not experiments:
        parser.error("name at least one experiment (conf/experiment/<name>.yaml)")
    if ns.results:
        overrides.append(f"paths.results_dir={ns.results}")
    for experiment in experiments:
        with user_errors("recallbench-table"):
            files = render_table(experiment, overrides)
        for path in files.values():
            print(path)
