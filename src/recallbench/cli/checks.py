"""Check every job of a command line before any work starts: its keys and values.

Hydra reports a misspelt key as ``Key 'nn' is not in struct`` (exit 1), and a value of the
wrong type (``memory.n=abc``) reaches the constructor and fails deep inside a run. Here every
job the command line would start (the sweep expanded as Hydra's basic sweeper expands it,
``hydra.sweeper.params`` of an experiment included) is composed and each group's keys are
checked against what builds it: the ``_target_``'s signature and annotations (memory methods,
protocols, embedders, judges, dataset loaders' options) or the generator's declared keys
(``llm.config.KEY_TYPES``); the job's metric names against its protocol's
(``EvalProtocol.check_metrics``, the rule its ``score`` applies after the replay). A mistake is ONE ``ConfigError`` line naming the key, the value and
what is expected, with the closest key names for a misspelt one (exit 2).

Hand-written rather than a structured-config schema per class: the schema already exists as
each constructor's annotations; repeating it in dataclasses would be a second copy to keep in
step.
"""

from __future__ import annotations

import contextlib
import re
import shlex
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omegaconf import DictConfig, OmegaConf

from recallbench import CONFIG_NAME
from recallbench.cli.build import HYDRA_KEYS, LABELS, job_metrics, plain, with_target
from recallbench.cli.config import check_run_keys
from recallbench.cli.signatures import check_arguments, check_value, hint
from recallbench.cli.sweep import check_places
from recallbench.errors import ConfigError, one_line
from recallbench.protocols.base import EvalProtocol
from recallbench.run.places import check_resume_dir
from recallbench.run.sweep import sweep_folder
from recallbench.store import reach_store

if TYPE_CHECKING:
    from hydra.core.override_parser.types import Override

# Arguments the builders inject (never keys of a config).
INJECTED = {
    "memory": {"llm", "embedder"},
    "protocol": {"seed"},
    "judge": {"llm"},
    "caim_judge": {"llm"},
}


def expand_jobs(argv: list[str]) -> tuple[list[list[str]], bool]:
    """The override lists of the jobs ``argv`` starts, and whether it is a multirun."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser

    # overrides: key=value, +key=value, ++key=value, and a deletion ~key (with or without =)
    args = [a for a in argv if ("=" in a or a.startswith("~")) and not a.startswith("-")]
    parser = OverridesParser.create()
    try:
        parsed = parser.parse_overrides(args)
    except Exception as exc:  # Hydra's OverrideParseException: position and expectation
        raise ConfigError(f"cannot read the command line: {one_line(exc)}") from None
    sweeps = [o for o in parsed if o.is_sweep_override()]
    multirun = any(a in ("-m", "--multirun") for a in argv)
    first = [
        _first_value(o) if o.is_sweep_override() else arg
        for arg, o in zip(args, parsed, strict=True)
    ]
    cfg = _compose(first, with_hydra=True)
    mode = cfg.hydra.get("mode")  # a RunMode enum once composed (str() gives "RunMode.MULTIRUN")
    multirun = multirun or str(getattr(mode, "name", mode)) == "MULTIRUN"
    if sweeps and not multirun:
        raise ConfigError(
            f"{sweeps[0].input_line}: several values sweep; add -m to run one job per value"
            " (recallbench -m ...)"
        )
    if not multirun:
        return [first], False
    params = [f"{k}={v}" for k, v in (cfg.hydra.sweeper.get("params") or {}).items()]
    batches = BasicSweeper.split_arguments(parser.parse_overrides(params + args), None)
    jobs = [job for batch in batches for job in batch]
    return jobs or [first], True


def _first_value(override: Override) -> str:
    return f"{override.get_key_element()}={next(iter(override.sweep_string_iterator()))}"


def _compose(overrides: list[str], with_hydra: bool = False) -> DictConfig:
    from hydra import compose, initialize_config_dir
    from hydra.errors import ConfigCompositionException

    from recallbench import CONF_DIR

    try:
        with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
            return compose(CONFIG_NAME, overrides=overrides, return_hydra_config=with_hydra)
    except ConfigCompositionException as exc:
        raise composition_error(exc, overrides) from None


def composition_error(exc: Exception, overrides: list[str]) -> ConfigError:
    """Hydra's "Could not override 'memory.nn'" as one line with the keys that exist."""
    found = re.search(r"Could not (?:override|append to) '([^']+)'", str(exc))
    if not found:
        return ConfigError(one_line(exc))
    key = found.group(1)
    given = next((o for o in overrides if o.lstrip("+~").split("=", 1)[0] == key), key)
    parent, _, leaf = key.rpartition(".")
    rest = [o for o in overrides if o != given]
    try:
        full = _compose(rest, with_hydra=True)
        node = OmegaConf.select(full, parent) if parent else full
        choice = full.hydra.runtime.choices.get(parent) if parent else None
    except Exception:
        return ConfigError(f"{given}: {one_line(exc)}")
    name = f"{parent} ({choice})" if choice else parent
    if node is None and parent:
        return ConfigError(f"{given}: {parent} is null in this config; set it first")
    if isinstance(node, DictConfig):
        keys = [str(k) for k in node if not str(k).startswith("_")]
        where = f"{name} has no key {leaf!r}" if parent else f"no top-level key {leaf!r}"
        return ConfigError(f"{given}: {where}. {hint(leaf, keys)}")
    return ConfigError(f"{given}: {one_line(exc)}")


# Hydra's flags that print something and start no job.
INFO_FLAGS = {"--help", "-h", "--hydra-help", "--cfg", "-c", "--info", "-i", "--shell-completion"}


def check_command_line(argv: list[str], retry: str | None = None) -> list[Path]:
    """Compose and check every job ``argv`` would start (its keys and values, its store, its
    folders: ``cli.sweep.check_places``); return the sweep folders of the jobs (one per distinct
    results folder, tag and stamp; none for an information flag such as ``--help``). A server
    store is reached before any folder is made (``store.reach_store``; ``retry``: the command
    its line names, default ``recallbench <argv>``)."""
    if INFO_FLAGS & {a.split("=", 1)[0] for a in argv}:
        return []
    jobs, multirun = expand_jobs(argv)
    retry = retry or shlex.join(["recallbench", *argv])
    seen: set[tuple[str, ...]] = set()
    reached: set[str] = set()
    folders: dict[Path, None] = {}
    for job in jobs:
        if tuple(job) in seen:
            continue
        seen.add(tuple(job))
        cfg = _compose(job)
        with _naming_job(job, len(jobs) > 1):
            check_run_keys(cfg)
            check_config(cfg)
            check_resume_dir(cfg.get("resume_dir"), multirun)  # its kind, before any job runs
            folder = sweep_folder(cfg, multirun)
        if (spec := str(cfg.get("store") or "sqlite")) not in reached:
            reach_store(spec, retry)  # its line ends in the command to retry: not wrapped
            reached.add(spec)
        if folder not in folders:
            with _naming_job(job, len(jobs) > 1):
                check_places(cfg)
            folders[folder] = None
    return list(folders)


@contextlib.contextmanager
def _naming_job(job: list[str], sweep: bool) -> Iterator[None]:
    """A ``ConfigError`` of one job of a sweep names the job."""
    try:
        yield
    except ConfigError as exc:
        if sweep:
            raise ConfigError(f"{exc} (sweep job {' '.join(job)})") from None
        raise


def check_config(cfg: DictConfig) -> None:
    """Every key and value of the groups of a composed config against what builds them."""
    config = plain(cfg)
    memory = config.get("memory") or {}
    _check_target(memory, "memory", "memory")
    _check_generator(config.get("generator") or {}, "generator")
    _check_target(config.get("embedder") or {}, "embedder", "embedder")
    if config.get("judge"):
        _check_judge(config["judge"], "judge", "judge")
    _check_dataset(config.get("dataset") or {})
    _check_protocol(config.get("protocol") or {}, job_metrics(cfg))


def _check_target(
    node: Mapping[str, Any], group: str, where: str, skip: frozenset[str] = frozenset()
) -> None:
    target = node.get("_target_")
    if not target:
        return
    fn = _target(str(target), where)
    arguments = {
        k: v
        for k, v in node.items()
        if k not in set(LABELS.get(group, ())) | skip and not str(k).startswith("_")
    }
    check_arguments(fn, arguments, where, INJECTED.get(group, set()))


def _check_judge(node: Mapping[str, Any], group: str, where: str) -> None:
    """A judge node: its generator's keys, and its own against the class it builds (the one
    its ``_target_`` names, or for a judge chosen by ``name`` inline, ``build.BY_NAME``'s)."""
    if node.get("generator"):
        _check_generator(node["generator"], f"{where}.generator")
    _check_target(with_target(node, group), group, where)


def _check_dataset(node: Mapping[str, Any]) -> None:
    if node.get("_target_"):
        fn = _target(str(node["_target_"]), "dataset")
        check_arguments(fn, dict(node.get("options") or {}), "dataset.options", {"data_dir"})


def _check_protocol(node: Mapping[str, Any], metrics: list[str]) -> None:
    """A protocol node's keys, its models' keys, and the job's metric names against the
    protocol's own rule (``EvalProtocol.check_metrics``, which its ``score`` applies again)."""
    if not node.get("_target_"):
        return
    cls = _target(str(node["_target_"]), "protocol")
    if isinstance(cls, type) and issubclass(cls, EvalProtocol):  # (not a factory function)
        cls.check_metrics(metrics)
    slots = dict(getattr(cls, "MODELS", {}))
    for arg, group in slots.items():
        sub = node.get(arg)
        if not isinstance(sub, Mapping):
            continue
        if group == "generator":
            _check_generator(sub, f"protocol.{arg}")
        elif group in ("judge", "caim_judge"):
            _check_judge(sub, group, f"protocol.{arg}")
        else:
            _check_target(sub, group, f"protocol.{arg}")
    _check_target(node, "protocol", "protocol", skip=frozenset(slots))


def _check_generator(node: Mapping[str, Any], where: str) -> None:
    from recallbench.llm.config import KEY_TYPES, check_keys

    keys = {k: v for k, v in node.items() if k not in HYDRA_KEYS}
    for key, value in keys.items():
        if key not in KEY_TYPES:
            try:
                check_keys({key: value})  # a key that looks like a secret gets its own message
            except ConfigError as exc:
                if "secret" in str(exc):
                    raise ConfigError(f"{where}: {exc}") from None
            raise ConfigError(f"{where}.{key}={value!r}: no such key. {hint(key, list(KEY_TYPES))}")
        check_value(f"{where}.{key}", value, KEY_TYPES[key])


def _target(path: str, where: str) -> Callable[..., object]:
    from hydra.utils import get_object

    try:
        target: Callable[..., object] = get_object(path)  # Hydra returns Any: a class or function
        return target
    except Exception as exc:
        raise ConfigError(f"{where}._target_={path!r}: {one_line(exc)}") from None
