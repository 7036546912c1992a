"""The ``table:`` block of ``conf/experiment/<experiment>.yaml``: one schema for every table.

    table:
      paper: lufy                 # papers/<paper>/reference.yaml holds the paper's numbers
      id: table3                  # table<n> | figure<n>; writes results/tables/<paper>_<id>.*
      title: "LUFY Table 3: cumulative retained memories and retention rate (%) per session"
      builder: recallbench.papers.lufy.memories.agreement_table   # default: the summary builder
      runs: lufy_table11          # the experiment whose run folders are read (default: this
                                  # one; null: none, the builder reads the data under DATA_DIR)
      rows:    [{label: LUFY, memory: lufy, logs: LUFY}, ...]
      columns: [{label: S1, session: 1}, ...]
      metrics: {retained: {label: Retained, scale: 1, digits: 1}, ...}
      notes:   {threshold: "..."}  # printed in the table's header
      ...                          # any other key is an option of the builder

Row and column keys: ``label`` (required, unique); where a cell reads a run summary (``session``,
``qsession``, ``value``, ``subset``, ``read: {j_audit: j_zep}``: a row's j_zep read as j_audit);
builder flags (``random``, ``annotators``, ``metric``); other keys select runs: a config group
(``memory: lufy``), a dotted path (``memory.threshold``), an alias (``logs``) (``analysis.select``).
Each row and column is a typed ``tables.entry.Entry`` (its selecting keys: ``Entry.select``), each
metric a ``tables.entry.MetricSpec``.

An experiment whose ``runs:`` names another experiment (or null) is table-only (``table_only``).

A user's own table names no ``paper``: its ``id`` is any name (``my_k_sweep`` writes
``results/tables/my_k_sweep.*``), it has no reference values, and ``runs:`` may name run
folders directly, by tag or by folder (one value or a list; both keys may be given)::

    table:
      id: my_k_sweep
      title: "My method against the baselines"
      runs: {tag: mysweep}          # or {folder: results/runs/mysweep/20260101-120000}
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, overload

from omegaconf import OmegaConf

from recallbench import CONF_DIR
from recallbench.analysis.runs import ALIASES
from recallbench.errors import ConfigError, did_you_mean
from recallbench.tables.entry import Entry, MetricSpec, parse_entries, parse_metrics
from recallbench.tables.render import ID_FORMAT, PAPERS_DIR
from recallbench.tables.sources import describe_sources, parse_sources

__all__ = [
    "SUMMARY_BUILDER",
    "TableSpec",
    "TableSpecError",
    "load_spec",
    "parse_spec",
    "table_only",
]

SUMMARY_BUILDER = "recallbench.tables.cells.summary_table"
GENERIC = ("paper", "id", "title", "builder", "runs", "rows", "columns", "metrics", "notes")
NOT_SELECTORS = frozenset({"experiment", "hydra", "paths"})  # config groups a run never varies
OWN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")  # the id (file name) of a user's own table
_REQUIRED = object()


class TableSpecError(ConfigError):
    """A ``table:`` block does not follow the schema; the message names file and key."""


@dataclass(frozen=True)
class TableSpec:
    """A validated ``table:`` block; ``options`` holds the builder's own keys."""

    experiment: str
    path: Path
    paper: str | None  # None: the user's own table (no reference values, a free id)
    id: str
    title: str
    builder: str
    runs: str | None  # experiment whose runs are read; None: the table reads no runs
    tag: str | None  # the tag those runs were written under (results/runs/<tag>/)
    rows: tuple[Entry, ...] = ()
    tags: tuple[str, ...] = ()  # runs: {tag: ...}: read the runs of these tags
    folders: tuple[str, ...] = ()  # runs: {folder: ...}: read the runs under these folders
    columns: tuple[Entry, ...] = ()
    metrics: Mapping[str, MetricSpec] | None = None
    notes: Mapping[str, str] | None = None
    options: Mapping[str, Any] | None = None

    def error(self, key: str, message: str) -> TableSpecError:
        """Return an error about ``table.<key>`` of this experiment's file."""
        return TableSpecError(f"{self.path}: table.{key}: {message}")

    def option(self, key: str, default: Any = _REQUIRED) -> Any:
        """Return the builder option ``key`` (an error naming the file when required and absent)."""
        options = self.options or {}
        if key in options:
            return options[key]
        if default is _REQUIRED:
            raise self.error(key, f"missing; the builder {self.builder} needs it")
        return default

    @overload
    def need(self, key: Literal["rows", "columns"]) -> tuple[Entry, ...]: ...
    @overload
    def need(self, key: Literal["metrics"]) -> Mapping[str, MetricSpec]: ...
    def need(self, key: str) -> tuple[Entry, ...] | Mapping[str, MetricSpec]:
        """Return ``rows``, ``columns`` or ``metrics``, an error when the block has none."""
        value: tuple[Entry, ...] | Mapping[str, MetricSpec] | None = getattr(self, key)
        if not value:
            raise self.error(key, f"missing or empty; the builder {self.builder} needs it")
        return value


Fail = Callable[[str, str], TableSpecError]  # (key, message) -> the error naming the file


def experiment_path(experiment: str, conf_dir: Path = CONF_DIR) -> Path:
    """Return ``conf/experiment/<experiment>.yaml`` ("did you mean" when it does not exist)."""
    path = Path(conf_dir) / "experiment" / f"{experiment}.yaml"
    if not path.is_file():
        raise did_you_mean("experiment", experiment, (p.stem for p in path.parent.glob("*.yaml")))
    return path


def _raw(path: Path) -> dict[str, Any]:
    cfg = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
    # an experiment file is a mapping of config keys (strings); anything else reads as empty
    return {str(k): v for k, v in cfg.items()} if isinstance(cfg, dict) else {}


def load_spec(experiment: str, table: object = None, conf_dir: Path = CONF_DIR) -> TableSpec:
    """Read and validate the ``table:`` block of an experiment.

    ``table`` is the block as composed by the command (overrides applied); None reads it from
    the experiment's file.
    """
    path = experiment_path(experiment, conf_dir)
    raw = _raw(path)
    block = raw.get("table") if table is None else table
    if block is None:
        raise TableSpecError(f"{path}: no 'table:' block (see recallbench.tables.spec)")
    return parse_spec(experiment, path, block, raw.get("tag"), conf_dir)


def table_only(experiment: str | None, table: object) -> str | None:
    """Explain why ``experiment`` cannot start a run (its table reads other runs or none)."""
    if not isinstance(table, Mapping) or "runs" not in table or table["runs"] == experiment:
        return None
    runs = table["runs"]
    if isinstance(runs, Mapping):
        return (
            f"experiment {experiment} is a table of existing runs ({describe_sources(runs)}), not a "
            f"sweep. Render it with `recallbench-table {experiment}`."
        )
    if runs is None:
        return (
            f"experiment {experiment} is table-only: its table reads the data under "
            f"paths.data_dir, not runs. Render it with `recallbench-table {experiment}`."
        )
    return (
        f"experiment {experiment} is table-only: its table reads the runs of experiment {runs}. "
        f"Run that sweep (`recallbench -m experiment={runs}`), then "
        f"`recallbench-table {experiment}`."
    )


def parse_spec(
    experiment: str,
    path: Path,
    block: object,
    own_tag: str | None = None,
    conf_dir: Path = CONF_DIR,
) -> TableSpec:
    """Validate a ``table:`` mapping; every error names the file, the key and what was expected."""

    def fail(key: str, message: str) -> TableSpecError:
        return TableSpecError(f"{path}: table.{key}: {message}")

    if not isinstance(block, Mapping):
        raise TableSpecError(f"{path}: table: expected a mapping, got {type(block).__name__}")
    _check_head(block, fail)
    runs: str | None
    tag: str | None
    if isinstance(block.get("runs"), Mapping):  # a user's table of tagged runs or folders
        tags, folders = parse_sources(block["runs"], fail)
        runs, tag = describe_sources(block["runs"]), (tags[0] if tags else None)
    else:
        runs, tag = _runs(experiment, block, own_tag, conf_dir, fail)
        tags, folders = (), ()
    groups = _selector_keys(conf_dir)
    return TableSpec(
        experiment=experiment,
        path=path,
        paper=block.get("paper"),
        id=block["id"],
        title=block["title"],
        builder=block.get("builder", SUMMARY_BUILDER),
        runs=runs,
        tag=tag,
        rows=parse_entries(block.get("rows"), "rows", groups, fail),
        columns=parse_entries(block.get("columns"), "columns", groups, fail),
        metrics=parse_metrics(block.get("metrics"), fail),
        notes=_notes(block.get("notes"), fail),
        options={k: v for k, v in block.items() if k not in GENERIC},
        tags=tags,
        folders=folders,
    )


def _check_head(block: Mapping[str, Any], fail: Fail) -> None:
    """Check ``paper``, ``title``, ``id`` and ``builder`` (and that ``kind`` is gone).

    Without ``paper`` the table is the user's own: any ``id`` made of letters, digits, ``-_.``.
    """
    if "kind" in block:
        raise fail("kind", "removed; name the cell builder with table.builder (a dotted path)")
    if not isinstance(block.get("title"), str) or not block["title"]:
        raise fail("title", f"expected a non-empty string, got {block.get('title')!r}")
    ident = block.get("id")
    if block.get("paper") is None:
        if not isinstance(ident, str) or not OWN_ID.fullmatch(ident):
            raise fail("id", f"expected a file name (letters, digits, -_.), got {ident!r}")
    else:
        papers = sorted(p.parent.name for p in PAPERS_DIR.glob("*/reference.yaml"))
        if block["paper"] not in papers:
            raise fail("paper", str(did_you_mean("paper", str(block["paper"]), papers).args[0]))
        if not isinstance(ident, str) or not ID_FORMAT.fullmatch(ident):
            raise fail(
                "id", f"expected table<n> or figure<n> (e.g. table3, figure11), got {ident!r}"
            )
    builder = block.get("builder", SUMMARY_BUILDER)
    if not isinstance(builder, str) or "." not in builder.strip("."):
        raise fail("builder", f"expected a dotted path module.function, got {builder!r}")


def _runs(
    experiment: str,
    block: Mapping[str, Any],
    own_tag: str | None,
    conf_dir: Path,
    fail: Fail,
) -> tuple[str | None, str | None]:
    """Return (experiment whose runs are read, their tag) from ``runs:``."""
    if "runs" not in block or block["runs"] == experiment:
        return experiment, str(own_tag or experiment)
    runs = block["runs"]
    if runs is None:
        return None, None
    if not isinstance(runs, str):
        raise fail("runs", f"expected an experiment name or null, got {runs!r}")
    try:
        source = _raw(experiment_path(runs, conf_dir))
    except KeyError as exc:
        raise fail("runs", str(exc.args[0])) from None
    upstream = (source.get("table") or {}).get("runs", runs)
    if upstream != runs:
        raise fail(
            "runs",
            f"experiment {runs} is itself table-only (it reads {upstream}); name the "
            "experiment that has the sweep",
        )
    return runs, str(source.get("tag") or runs)


def _selector_keys(conf_dir: Path) -> list[str]:
    groups = [p.name for p in Path(conf_dir).iterdir() if p.is_dir()]
    return sorted({*groups, *ALIASES, "job"} - NOT_SELECTORS)  # job: the run's name


def _notes(value: Any, fail: Fail) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise fail("notes", f"expected a mapping name -> text, got {type(value).__name__}")
    return {str(k): str(v) for k, v in value.items()}
