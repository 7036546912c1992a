"""The cross-paper matrix's plan: which method runs on which setting, and why a cell cannot.

``conf/experiment/matrix.yaml`` holds a ``matrix:`` block::

    matrix:
      reference: no_memory     # the method every other is tested against, per setting
      methods: null            # null: every memory method (module stem = config stem)
      labels: {lufy: LUFY}     # optional row labels (default: the config stem)
      settings:                # the columns: a paper's setting each
        - {slice: lufy_cross, episodes: 2}        # one column per column of that table
        - {key: msc_theanine, label: "MSC (THEANINE)", experiment: theanine_table1,
           overrides: [dataset=msc], episodes: 3}
      tables: [matrix_f1, ...] # the table experiments `recallbench matrix` renders at the end

A setting composes ``experiment=<experiment>`` (a paper's sweep: its dataset, protocol, judge,
embedder and metrics) with its ``overrides``; a ``slice`` setting takes the columns of that
experiment's table (each column's run-selecting keys become overrides, e.g. LUFY's ``logs``),
so ``lufy_cross`` is the matrix's LUFY slice rather than a copy of it. A cell is unavailable
when the dataset's files are absent, when the method or the protocol needs a fact about the
data the sampled episodes do not provide (``MemoryMethod.needs``, ``EvalProtocol.needs``,
``datasets.needs.provided``), or when the protocol refuses the method (``refuses``): the reason
is derived from the code and the data, never typed per cell.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NotRequired, TypedDict

from omegaconf import DictConfig, OmegaConf

from recallbench import CONF_DIR
from recallbench.analysis.runs import ALIASES
from recallbench.cli.build import job_metrics
from recallbench.cli.checks import composition_error
from recallbench.cli.config import compose_job
from recallbench.errors import ConfigError
from recallbench.io import safe_name
from recallbench.records import JSON

__all__ = [
    "Cell",
    "Method",
    "Plan",
    "PlanSetting",
    "Setting",
    "every_method",
    "matrix_block",
    "methods_of",
    "setting_entry",
    "settings_of",
]

PLACE = ("value", "session", "qsession", "subset")  # column keys that say where a cell reads
Scalar = str | int | float | bool  # a config value that selects runs or places a cell


@dataclass(frozen=True)
class Method:
    """A row: a memory config and its label."""

    memory: str
    label: str


@dataclass(frozen=True)
class Setting:
    """A column: the overrides of its jobs, how many episodes, where its cells read."""

    key: str
    label: str
    overrides: tuple[str, ...]
    episodes: int | None
    place: Mapping[str, Scalar] = field(default_factory=dict)  # value/session of its cells
    values: Mapping[str, JSON] = field(default_factory=dict)  # dataset.* values that select it


class Cell(TypedDict, total=False):
    """One cell of ``plan.json``: its job and, once planned or run, how it went."""

    job: str
    status: str  # unavailable | skipped | finished | failed
    reason: str
    run: str
    reused: bool
    seconds: float
    cpu_seconds: float


class PlanSetting(TypedDict):
    """One column of ``plan.json``: how the tables find its runs, and what it sampled."""

    key: str
    label: str
    selector: dict[str, Scalar]
    place: dict[str, Scalar]
    episodes_asked: int | None
    metrics: list[str]
    dataset: str
    protocol: str
    facts: NotRequired[list[str]]
    episodes: NotRequired[int]


class PlanMethod(TypedDict):
    """One row of ``plan.json``."""

    memory: str
    label: str


class Plan(TypedDict):
    """``<results>/runs/<tag>/plan.json``, read by ``tables.matrix``."""

    tag: str
    reference: str
    methods: list[PlanMethod]
    settings: list[PlanSetting]
    cells: dict[str, dict[str, Cell]]  # setting key -> memory -> cell
    planned_s: NotRequired[float]
    total_s: NotRequired[float]
    total_cpu_s: NotRequired[float]


def matrix_block(cfg: DictConfig | None, where: str) -> dict[str, JSON]:
    """The ``matrix:`` mapping of a composed config (an error naming ``where`` when absent)."""
    block = cfg.get("matrix") if cfg is not None else None
    if block is None:
        raise ConfigError(f"{where}: no 'matrix:' block (see recallbench.cli.matrix_plan)")
    value = OmegaConf.to_container(block, resolve=True) if OmegaConf.is_config(block) else block
    if not isinstance(value, dict) or not value.get("settings"):
        raise ConfigError(f"{where}: matrix.settings: expected a non-empty list of settings")
    return {str(k): v for k, v in value.items()}


def every_method(conf_dir: Path = CONF_DIR) -> list[str]:
    """Every memory method: the config whose stem is its ``_target_``'s module (or package)."""
    out = []
    for path in sorted((Path(conf_dir) / "memory").glob("*.yaml")):
        if path.stem.startswith("_"):
            continue
        cfg = OmegaConf.load(path)  # a base config names its own _target_ (variants do not)
        target = str(cfg.get("_target_", "")) if isinstance(cfg, DictConfig) else ""
        parts = target.split(".")
        if len(parts) >= 4 and parts[:2] == ["recallbench", "memory"] and parts[2] == path.stem:
            out.append(path.stem)
    return out


def methods_of(block: Mapping[str, JSON], where: str) -> list[Method]:
    """The rows: ``methods`` (null: every method), labelled by ``labels``."""
    labels = block.get("labels") or {}
    # every method: in the order of ``labels`` (the reference first), the rest after
    names = block.get("methods") or sorted(
        every_method(),
        key=lambda n: (
            n != block.get("reference"),
            list(labels).index(n) if n in labels else len(labels),
            n,
        ),
    )
    known = {p.stem for p in (CONF_DIR / "memory").glob("*.yaml") if not p.stem.startswith("_")}
    if unknown := [n for n in names if n not in known]:
        raise ConfigError(f"{where}: matrix.methods: no conf/memory config {unknown}")
    return [Method(str(n), str(labels.get(n, n))) for n in names]


def _quote(value: JSON) -> str:
    text = str(value)
    return text if text.replace("_", "").replace("-", "").isalnum() else repr(text)


def _slice(entry: Mapping[str, JSON], where: str, default_episodes: int | None) -> list[Setting]:
    """One setting per column of the table of experiment ``entry['slice']``."""
    name = str(entry["slice"])
    path = Path(CONF_DIR) / "experiment" / f"{name}.yaml"
    if not path.is_file():
        raise ConfigError(f"{where}: matrix.settings: slice {name!r}: no {path}")
    table = OmegaConf.to_container(OmegaConf.load(path)).get("table") or {}  # type: ignore[union-attr]
    columns = table.get("columns") or []
    if not columns:
        raise ConfigError(f"{where}: matrix.settings: slice {name!r}: its table has no columns")
    out = []
    for column in columns:
        selects = {k: v for k, v in column.items() if k != "label" and k not in PLACE}
        values = {ALIASES.get(k, k): v for k, v in selects.items()}
        label = f"{entry.get('label', name)}: {column['label']}"
        out.append(
            Setting(
                key=safe_name(f"{name}-{'-'.join(str(v) for v in values.values())}"),
                label=label,
                overrides=(
                    f"experiment={name}",
                    *(f"{k}={_quote(v)}" for k, v in values.items()),
                    *entry.get("overrides", ()),
                ),
                episodes=entry.get("episodes", default_episodes),
                place={k: column[k] for k in PLACE if k in column},
                values={k: v for k, v in values.items() if "." in k},
            )
        )
    return out


def settings_of(block: Mapping[str, JSON], where: str) -> list[Setting]:
    """The columns of the matrix (slices expanded); keys and labels are unique."""
    default = block.get("episodes")
    out: list[Setting] = []
    for i, entry in enumerate(block["settings"]):
        if not isinstance(entry, Mapping):
            raise ConfigError(f"{where}: matrix.settings[{i}]: expected a mapping, got {entry!r}")
        if "slice" in entry:
            out += _slice(entry, where, default)
            continue
        missing = [k for k in ("key", "label", "experiment") if k not in entry]
        if missing:
            raise ConfigError(f"{where}: matrix.settings[{i}]: missing {missing} (or a slice)")
        overrides = (f"experiment={entry['experiment']}", *entry.get("overrides", ()))
        values = dict(o.split("=", 1) for o in overrides if o.startswith("dataset."))
        out.append(
            Setting(
                key=str(entry["key"]),
                label=str(entry["label"]),
                overrides=overrides,
                episodes=entry.get("episodes", default),
                place={k: entry[k] for k in PLACE if k in entry},
                values=values,
            )
        )
    _unique(out, where)
    return out


def _unique(settings: Sequence[Setting], where: str) -> None:
    for attr in ("key", "label"):
        seen = [getattr(s, attr) for s in settings]
        if dupes := sorted({x for x in seen if seen.count(x) > 1}):
            raise ConfigError(f"{where}: matrix.settings: {attr} {dupes} appear twice")


def compose_checked(overrides: list[str]) -> tuple[DictConfig, dict[str, str]]:
    """``compose_job``, with Hydra's composition errors as one line (``checks``)."""
    from hydra.errors import ConfigCompositionException

    try:
        return compose_job(overrides)
    except ConfigCompositionException as exc:
        raise composition_error(exc, overrides) from None


def portable_reason(reason: str, cfg: DictConfig) -> str:
    """A reason as a table may print it: the data folder as ``DATA_DIR``, not this machine's
    path, and without the advice meant for a terminal (fetching the data)."""
    reason = reason.split(" Fetch the data", 1)[0]
    given = [cfg.paths.get("data_dir"), cfg.dataset.get("data_dir")]
    folders = {str(f) for f in given if f} | {str(Path(str(f)).resolve()) for f in given if f}
    for folder in sorted(folders, key=len, reverse=True):
        reason = reason.replace(folder, "DATA_DIR")
    return reason


def _selector(cfg: DictConfig, choices: dict[str, str], setting: Setting) -> dict[str, Scalar]:
    """How the tables find the column's runs: its dataset, protocol and the scalar dataset
    values it sets (LUFY's logs; a list value such as GVD's users does not select)."""
    values = {k: OmegaConf.select(cfg, k) for k in setting.values}
    scalars = {k: v for k, v in values.items() if isinstance(v, str | int | float | bool)}
    return {"dataset": choices["dataset"], "protocol": choices["protocol"], **scalars}


def setting_entry(setting: Setting, cfg: DictConfig, choices: dict[str, str]) -> PlanSetting:
    """The plan's entry of a setting (a column) whose job config is ``cfg``."""
    return {
        "key": setting.key,
        "label": setting.label,
        "selector": _selector(cfg, choices, setting),
        "place": dict(setting.place),
        "episodes_asked": setting.episodes,
        "metrics": job_metrics(cfg),
        "dataset": str(cfg.dataset.name),
        "protocol": str(cfg.protocol.name),
    }


def skip(plan: Plan, memories: Sequence[str], why: str) -> None:
    """Mark the runnable cells of ``memories`` not run, because ``why`` (``--skip``/``--why``).

    Their rows stay in the tables as "n/a: not run", the notes give ``why`` (e.g. the hours a
    method takes on two cores); a later command without ``--skip`` plans and runs them."""
    if not why.strip():
        raise ConfigError("--skip needs --why: the reason the tables give for the cells not run")
    for row in plan["cells"].values():
        for memory in memories:
            cell = row.get(memory)
            if cell is not None and cell.get("status") not in ("unavailable", "finished"):
                cell.update({"status": "skipped", "reason": f"not run ({why.strip()})"})
