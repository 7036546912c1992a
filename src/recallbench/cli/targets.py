"""The one list of targets: every ``make reproduce-*`` / ``attribution-*`` name, read from the
experiment files ``conf/experiment/*.yaml`` (``make help``, ``make reproduce-list``, ``make tables``,
``make attribution`` and ``tests/golden/golden.py`` all read it from here).

A target's name: ``reproduce-table-<paper>-<n>`` (``-figure-``) for the experiment
``<paper>_table<n>`` (``_figure<n>``) that has a ``table:`` block, or the ``reproduce.target`` an
experiment names (``reproduce-lufy-cross``, ``attribution-lufy``), or one of its
``reproduce.aliases`` (``reproduce-table-locomo-qa``: locomo_table1 judged by Mem0's J).
``reproduce.lists`` puts the target in ``make tables`` (``tables``: runs here on the data),
``make attribution`` or ``make golden`` (``golden``, with the extra overrides
``reproduce.golden_args``); a paper experiment in no list says why in ``reproduce.why_not``
(tests/cli/test_reproduce.py). What a target runs: ``cli/reproduce.py``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from recallbench import CONF_DIR
from recallbench.errors import ConfigError
from recallbench.records import JSON

__all__ = [
    "PAPER_TABLE",
    "Target",
    "block_of",
    "experiment_of",
    "group",
    "group_tables",
    "listing",
    "read_experiment",
    "target_of",
    "targets",
]

TARGET = re.compile(r"^reproduce-(table|figure)-([a-z]+)-(\d+)$")
PAPER_TABLE = re.compile(r"^([a-z]+)_(table|figure)(\d+)$")


@dataclass(frozen=True)
class Target:
    """A make target: the experiment it reproduces and, for an alias, the judge it fixes."""

    name: str
    experiment: str
    help: str
    judge: str | None = None
    alias: bool = False


def experiment_of(target: str) -> str:
    """The experiment a target reproduces (``reproduce-table-lufy-11`` -> ``lufy_table11``)."""
    known = targets()
    if target in known:
        return known[target].experiment
    match = TARGET.match(target)
    if match is None:
        raise ConfigError(
            f"{target}: expected reproduce-table-<paper>-<n>, reproduce-figure-<paper>-<n> or a "
            "target an experiment names (make reproduce-list)"
        )
    kind, paper, number = match.groups()
    return f"{paper}_{kind}{number}"


def target_of(experiment: str) -> str:
    """``lufy_table11`` -> ``reproduce-table-lufy-11`` (the inverse of :func:`experiment_of`)."""
    match = PAPER_TABLE.match(experiment)
    if match is None:
        raise ConfigError(f"{experiment}: expected <paper>_table<n> or <paper>_figure<n>")
    paper, kind, number = match.groups()
    return f"reproduce-{kind}-{paper}-{number}"


def read_experiment(experiment: str, conf_dir: Path = CONF_DIR) -> dict[str, JSON]:
    """``conf/experiment/<experiment>.yaml`` as plain data (a clear error naming a bad file)."""
    path = conf_dir / "experiment" / f"{experiment}.yaml"
    if not path.is_file():
        raise ConfigError(f"{path}: no such experiment (make reproduce-* names conf/experiment/)")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    block = data.get("reproduce") or {}
    if not isinstance(block, dict):
        raise ConfigError(f"{path}: reproduce: expected a mapping, got {block!r}")
    return data


def block_of(data: Mapping[str, JSON]) -> dict[str, JSON]:
    """An experiment's ``reproduce:`` block ({} when it has none)."""
    return dict(data.get("reproduce") or {})


def targets(conf_dir: Path = CONF_DIR) -> dict[str, Target]:
    """Every make target the experiments define, by name (name order of the experiments)."""
    out: dict[str, Target] = {}
    for path in sorted((conf_dir / "experiment").glob("*.yaml")):
        data = read_experiment(path.stem, conf_dir)
        block, table = block_of(data), data.get("table") or {}
        name = block.get("target")
        if name is None and PAPER_TABLE.match(path.stem) and table:
            name = target_of(path.stem)
        if name is None:
            continue
        out[name] = Target(name, path.stem, str(block.get("help") or table.get("title", "")))
        for alias, spec in (block.get("aliases") or {}).items():
            spec = spec or {}
            out[alias] = Target(
                alias, path.stem, str(spec.get("help", "")), spec.get("judge"), True
            )
    return out


def listing(conf_dir: Path = CONF_DIR) -> list[tuple[str, str]]:
    """(target, title) of every target the experiments define, in name order."""
    return sorted((t.name, t.help) for t in targets(conf_dir).values())


def group(name: str, conf_dir: Path = CONF_DIR) -> dict[str, list[str]]:
    """The targets in list ``name`` (``tables``, ``attribution``, ``golden``) with the extra
    overrides each takes there (``reproduce.golden_args``), a target after those it needs."""
    found: dict[str, tuple[list[str], list[str]]] = {}
    for known in targets(conf_dir).values():
        if known.alias:
            continue  # its experiment's own target is the one listed
        data = read_experiment(known.experiment, conf_dir)
        block = block_of(data)
        if name in (block.get("lists") or []):
            runs = (data.get("table") or {}).get("runs")
            read = [target_of(runs)] if isinstance(runs, str) and runs != known.experiment else []
            needs = [*(block.get("needs") or []), *read]
            found[known.name] = ([str(a) for a in block.get(f"{name}_args") or []], needs)
    ordered: dict[str, list[str]] = {}

    def visit(target: str) -> None:
        if target in ordered or target not in found:
            return
        for need in found[target][1]:
            visit(need)
        ordered[target] = found[target][0]

    for name_ in sorted(found, key=_natural):
        visit(name_)
    return ordered


def group_tables(name: str, conf_dir: Path = CONF_DIR) -> list[str]:
    """The experiments whose tables the targets of list ``name`` render (``reproduce.tables``,
    else the target's own experiment), in the list's order, each once."""
    known = targets(conf_dir)
    found: dict[str, None] = {}
    for target in group(name, conf_dir):
        block = block_of(read_experiment(known[target].experiment, conf_dir))
        for experiment in block.get("tables") or [known[target].experiment]:
            found[str(experiment)] = None
    return list(found)


def _natural(name: str) -> tuple[int | str, ...]:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))
