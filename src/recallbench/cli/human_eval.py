"""``recallbench human-eval export|import``: run a paper's human evaluation around its tables.

    recallbench human-eval export carecall_table5 [--seed 0] [--out DIR] [--results DIR] [KEY=VALUE ...]
    recallbench human-eval import carecall_table5 sheet_ann1.csv sheet_ann2.csv [--results DIR]

An experiment of a human study names it in its table block::

    table:
      human: {module: recallbench.papers.carecall.human, runs: carecall_table4}

``module`` holds the study (``STUDY``, or the attribute ``study`` names), its units function
(``units(spec, ctx)``, or the one ``units`` names) and the table builders; ``runs`` names the
experiment whose newest runs are exported (null: the study reads the data under
``paths.data_dir``). ``export`` writes the blinded sheet and its instructions for annotators
(``results/human/<study>/to_annotators/`` or ``--out``) and, apart from them, the key and
``export.json``; ``import`` checks filled sheets against the key, keeps the ratings
(``results/human/<study>/ratings.csv``) and renders every experiment of the study.
``python -m recallbench.cli human-eval ...`` is the same command.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from omegaconf import DictConfig, OmegaConf

from recallbench import CONF_DIR
from recallbench.cli.build import plain
from recallbench.cli.config import compose_job, user_errors
from recallbench.errors import ConfigError
from recallbench.verdict import JSONValue

if TYPE_CHECKING:
    from recallbench.humaneval import Study, Unit
    from recallbench.run.read import RunRecord
    from recallbench.tables import TableSpec

__all__ = ["export_study", "human_eval_main", "import_study"]

KEYS = (("study", "STUDY"), ("units", "units"))  # table.human keys and their defaults


def _study(
    experiment: str, overrides: list[str]
) -> tuple[DictConfig, TableSpec, dict[str, JSONValue], Study, Callable[..., list[Unit]]]:
    """Compose ``experiment``; return its config, table spec, human block and study module."""
    from recallbench.tables import load_spec

    cfg, _ = compose_job([f"experiment={experiment}", *overrides])
    table = cfg.get("table")
    spec = load_spec(
        experiment, None if table is None else OmegaConf.to_container(table, resolve=True)
    )
    human = spec.option("human", None)
    if not isinstance(human, dict) or "module" not in human:
        raise ConfigError(
            f"{spec.path}: table.human: expected {{module: <papers module>, runs: <experiment>}}; "
            f"experiments with a human study: {', '.join(studies()) or 'none'}"
        )
    try:
        module = importlib.import_module(str(human["module"]))
    except ModuleNotFoundError as exc:
        raise ConfigError(f"{spec.path}: table.human.module: {exc}") from None
    study, units = (getattr(module, str(human.get(k, d)), None) for k, d in KEYS)
    if study is None or not callable(units):
        raise ConfigError(f"{spec.path}: table.human: {human['module']} has no study or units")
    return cfg, spec, human, study, units


def studies(conf_dir: Path = CONF_DIR) -> list[str]:
    """The experiments whose table block has a ``human:`` study."""
    return sorted(
        p.stem
        for p in (Path(conf_dir) / "experiment").glob("*.yaml")
        if "\n  human:" in p.read_text(encoding="utf-8")
    )


def _runs(results_dir: Path, experiment: str | None) -> list[RunRecord]:
    from recallbench.analysis import find_runs, latest_per_job
    from recallbench.tables import load_spec

    if experiment is None:
        return []
    tag = load_spec(str(experiment)).tag
    runs = list(latest_per_job(find_runs(results_dir, tag)).values())
    if not runs:
        raise ConfigError(
            f"no finished runs under {results_dir}/runs/{tag}: run `recallbench -m "
            f"experiment={experiment}` (or its make target) before exporting"
        )
    return runs


def export_study(
    experiment: str, overrides: list[str], seed: int, out: Path | None
) -> dict[str, Path]:
    """Export ``experiment``'s study (module docstring); return the files written."""
    from recallbench.humaneval import export_sheet, record_export, study_dir
    from recallbench.tables import TableContext, header_for

    cfg, spec, human, study, make_units = _study(experiment, overrides)
    results = Path(cfg.paths.results_dir)
    if (tag := human.get("runs")) is not None and not isinstance(tag, str):
        raise ConfigError(f"{spec.path}: table.human.runs: expected an experiment, got {tag!r}")
    runs = _runs(results, tag)
    ctx = TableContext(results, Path(cfg.paths.data_dir), tuple(runs), plain(cfg, resolve=False))
    units = make_units(spec, ctx)
    folder = study_dir(results, study)
    paths = export_sheet(study, units, out or folder / "to_annotators", folder / "key.csv", seed)
    header = header_for(runs) if runs else {"data": str(cfg.paths.data_dir)}
    info = {"experiment": experiment, "study": study.name, "seed": seed, "units": len(units)}
    paths["export"] = record_export(results, study, {**info, "header": header})
    return paths


def import_study(experiment: str, overrides: list[str], files: list[Path]) -> dict[str, Path]:
    """Import filled sheets of ``experiment``'s study and render the study's tables."""
    from recallbench.cli.table import render_table
    from recallbench.humaneval import import_ratings, ratings_path, study_dir, write_ratings

    cfg, _, _, study, _ = _study(experiment, overrides)
    results = Path(cfg.paths.results_dir)
    key = study_dir(results, study) / "key.csv"
    if not key.exists():
        raise ConfigError(
            f"{key}: no key; export the study first (recallbench human-eval export {experiment})"
        )
    ratings = import_ratings(study, key, files)
    if not ratings:
        raise ConfigError(f"{', '.join(map(str, files))}: no rating in the sheets")
    paths = {"ratings": write_ratings(ratings, ratings_path(results, study))}
    for other in studies():
        if _study(other, overrides)[3] is study:
            paths.update({f"{other}.{k}": v for k, v in render_table(other, overrides).items()})
    return paths


def human_eval_main(argv: list[str] | None = None) -> None:
    """Console entry ``recallbench human-eval export|import``."""
    parser = argparse.ArgumentParser(
        prog="recallbench human-eval", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("action", choices=("export", "import"))
    parser.add_argument(
        "experiment", help="an experiment with a human study: " + ", ".join(studies())
    )
    parser.add_argument("args", nargs="*", metavar="SHEET.csv | KEY=VALUE")
    parser.add_argument("--results", help="results folder (default: paths.results_dir)")
    parser.add_argument("--seed", type=int, default=0, help="shuffling and blinding seed (export)")
    parser.add_argument("--out", type=Path, help="folder for the annotators' sheet (export)")
    ns = parser.parse_intermixed_args(argv)
    overrides = [a for a in ns.args if "=" in a]
    files = [Path(a) for a in ns.args if "=" not in a]
    if ns.results:
        overrides.append(f"paths.results_dir={ns.results}")
    with user_errors("recallbench human-eval"):
        if ns.action == "export":
            if files:
                parser.error(f"export takes no sheet files, got {[str(f) for f in files]}")
            paths = export_study(ns.experiment, overrides, ns.seed, ns.out)
        else:
            if not files:
                parser.error("import needs the filled sheet files (CSV)")
            paths = import_study(ns.experiment, overrides, files)
    for path in paths.values():
        print(path)
