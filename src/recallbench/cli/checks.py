"""Check every job of a command line before any work starts: its keys and values.

Hydra reports a misspelt key as ``Key 'nn' is not in struct`` (exit 1), and a value of the
wrong type (``memory.n=abc``) reaches the constructor and fails deep inside a run. Here every
job the command line would start (the sweep expanded as Hydra's basic sweeper expands it,
``hydra.sweeper.params`` of an experiment included) is composed and each group's keys are
checked against what builds it: the ``_target_``'s signature and annotations (memory methods,
protocols, embedders, judges, dataset loaders' options) or the generator's declared keys
(``llm.config.KEY_TYPES``). A mistake is ONE ``ConfigError`` line naming the key, the value and
what is expected, with the closest key names for a misspelt one (exit 2).

Hand-written rather than a structured-config schema per class: the schema already exists as
each constructor's annotations; repeating it in dataclasses would be a second copy to keep in
step.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from recallbench.cli.build import HYDRA_KEYS, LABELS, plain
from recallbench.cli.config import check_run_keys
from recallbench.errors import ConfigError, did_you_mean, one_line

# Arguments the builders inject (never keys of a config).
INJECTED = {"memory": {"llm", "embedder"}, "protocol": {"seed"}, "judge": {"llm"}}


def expand_jobs(argv: list[str]) -> tuple[list[list[str]], bool]:
    """The override lists of the jobs ``argv`` starts, and whether it is a multirun."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser

    args = [a for a in argv if "=" in a and not a.startswith("-")]
    parser = OverridesParser.create()
    try:
        parsed = parser.parse_overrides(args)
    except Exception as exc:  # Hydra's OverrideParseException: position and expectation
        raise ConfigError(f"cannot read the command line: {one_line(exc)}") from None
    sweeps = [o for o in parsed if o.is_sweep_override()]
    multirun = any(a in ("-m", "--multirun") for a in argv)
    first = [_first_value(o) if o.is_sweep_override() else o.input_line for o in parsed]
    cfg = _compose(first, with_hydra=True)
    multirun = multirun or str(cfg.hydra.get("mode")) == "MULTIRUN"
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


def _first_value(override) -> str:
    return f"{override.get_key_element()}={next(iter(override.sweep_string_iterator()))}"


def _compose(overrides: list[str], with_hydra: bool = False) -> DictConfig:
    from hydra import compose, initialize_config_dir
    from hydra.errors import ConfigCompositionException

    from recallbench import CONF_DIR

    try:
        with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
            return compose("config", overrides=overrides, return_hydra_config=with_hydra)
    except ConfigCompositionException as exc:
        raise _composition_error(exc, overrides) from None


def _composition_error(exc: Exception, overrides: list[str]) -> ConfigError:
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
        return ConfigError(f"{given}: {where}. {_hint(leaf, keys)}")
    return ConfigError(f"{given}: {one_line(exc)}")


def _hint(name: str, options: list[str]) -> str:
    message = str(did_you_mean("key", name, options))
    return message[message.index(".") + 2 :] if ". " in message else message


# Hydra's flags that print something and start no job.
INFO_FLAGS = {"--help", "-h", "--hydra-help", "--cfg", "-c", "--info", "-i", "--shell-completion"}


def check_command_line(argv: list[str]) -> int:
    """Compose and check every job ``argv`` would start; return how many jobs that is."""
    if INFO_FLAGS & {a.split("=", 1)[0] for a in argv}:
        return 0
    jobs, _ = expand_jobs(argv)
    seen: set[tuple[str, ...]] = set()
    for job in jobs:
        if tuple(job) in seen:
            continue
        seen.add(tuple(job))
        cfg = _compose(job)
        try:
            check_run_keys(cfg)
            check_config(cfg)
        except ConfigError as exc:
            if len(jobs) > 1:
                raise ConfigError(f"{exc} (sweep job {' '.join(job)})") from None
            raise
    return len(jobs)


def check_config(cfg: DictConfig) -> None:
    """Every key and value of the groups of a composed config against what builds them."""
    config = plain(cfg)
    memory = config.get("memory") or {}
    _check_target(memory, "memory", "memory")
    _check_generator(config.get("generator") or {}, "generator")
    _check_target(config.get("embedder") or {}, "embedder", "embedder")
    if config.get("judge"):
        _check_judge(config["judge"], "judge")
    _check_dataset(config.get("dataset") or {})
    _check_protocol(config.get("protocol") or {})


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


def _check_judge(node: Mapping[str, Any], where: str) -> None:
    if node.get("generator"):
        _check_generator(node["generator"], f"{where}.generator")
    _check_target(node, "judge", where)


def _check_dataset(node: Mapping[str, Any]) -> None:
    if node.get("_target_"):
        fn = _target(str(node["_target_"]), "dataset")
        check_arguments(fn, dict(node.get("options") or {}), "dataset.options", {"data_dir"})


def _check_protocol(node: Mapping[str, Any]) -> None:
    if not node.get("_target_"):
        return
    cls = _target(str(node["_target_"]), "protocol")
    slots = dict(getattr(cls, "MODELS", {}))
    for arg, group in slots.items():
        sub = node.get(arg)
        if not isinstance(sub, Mapping):
            continue
        if group == "generator":
            _check_generator(sub, f"protocol.{arg}")
        elif group in ("judge", "caim_judge"):
            _check_judge(sub, f"protocol.{arg}")
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
            raise ConfigError(
                f"{where}.{key}={value!r}: no such key. {_hint(key, list(KEY_TYPES))}"
            )
        _check_value(f"{where}.{key}", value, KEY_TYPES[key])


def _target(path: str, where: str) -> Callable[..., Any]:
    from hydra.utils import get_object

    try:
        return get_object(path)
    except Exception as exc:
        raise ConfigError(f"{where}._target_={path!r}: {one_line(exc)}") from None


def check_arguments(
    fn: Callable[..., Any], arguments: Mapping[str, Any], where: str, injected: set[str]
) -> None:
    """Each key of ``arguments`` is a parameter of ``fn`` and its value fits the annotation."""
    params, hints, open_ended = _parameters(fn)
    for name in injected | {"self"}:
        params.pop(name, None)
    for key, value in arguments.items():
        if key not in params:
            if open_ended:
                continue
            raise ConfigError(f"{where}.{key}={value!r}: no such key. {_hint(key, list(params))}")
        if key in hints:
            _check_value(f"{where}.{key}", value, hints[key])
        elif params[key].default not in (None, inspect.Parameter.empty):
            _check_value(f"{where}.{key}", value, type(params[key].default))


def _parameters(fn: Callable[..., Any]) -> tuple[dict[str, inspect.Parameter], dict, bool]:
    """Named parameters and annotations of ``fn``; for a class, those of every ``__init__`` up
    its MRO while each passes ``**params`` on to ``super().__init__`` (the house pattern of
    memory methods over ``MemoryMethod``), or, for a class that names it in ``KEYWORDS_TO``,
    those of the callable its ``**keys`` go to. The flag says whether unknown keys are accepted."""
    params: dict[str, inspect.Parameter] = {}
    hints: dict[str, Any] = {}
    inits = [fn]
    if isinstance(fn, type) and getattr(fn, "KEYWORDS_TO", None) is not None:
        # a class that hands its ``**keys`` to another callable (TimeRAG's Policy) says so
        inits = [fn.__dict__["__init__"], fn.KEYWORDS_TO]
    elif isinstance(fn, type):
        inits = [c.__dict__["__init__"] for c in fn.__mro__ if "__init__" in c.__dict__]
    for init in inits:
        if init is object.__init__:
            return params, hints, True
        if isinstance(init, type):  # a dataclass that takes the keys
            init = init.__init__
        own = inspect.signature(init).parameters
        for name, param in own.items():
            if param.kind not in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
                params.setdefault(name, param)
        for name, hint in _hints(init).items():
            hints.setdefault(name, hint)
        if not any(p.kind is p.VAR_KEYWORD for p in own.values()):
            return params, hints, False
    return params, hints, True


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """The evaluable annotations of ``fn``; those that do not evaluate are skipped."""
    try:
        return typing.get_type_hints(fn)
    except Exception:  # an annotation naming a TYPE_CHECKING-only import: one by one
        module = vars(inspect.getmodule(fn) or typing)
        hints = {}
        for name, text in getattr(fn, "__annotations__", {}).items():
            try:
                hints[name] = eval(text, module) if isinstance(text, str) else text  # noqa: S307
            except Exception:
                continue
        return hints


def _check_value(key: str, value: Any, annotation: Any) -> None:
    if not fits(value, annotation):
        raise ConfigError(f"{key}={value!r}: expected {describe(annotation)}")


def fits(value: Any, annotation: Any) -> bool:
    """Does ``value`` (a plain config value) fit the type ``annotation``? Unknown types do."""
    origin = typing.get_origin(annotation)
    if annotation is Any or annotation is inspect.Parameter.empty:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(fits(value, a) for a in typing.get_args(annotation))
    if origin is typing.Literal:
        return value in typing.get_args(annotation)
    if annotation is type(None):
        return value is None
    if annotation is bool:
        return isinstance(value, bool)
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if annotation is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if annotation is str or annotation is Path:
        return isinstance(value, str)
    base = origin or annotation
    if base in (list, tuple, set, frozenset) or _abc(base, "Sequence"):
        return isinstance(value, list | tuple)
    if base is dict or _abc(base, "Mapping"):
        return isinstance(value, dict)
    return True  # an object the builder injects or converts itself


def _abc(base: Any, name: str) -> bool:
    import collections.abc

    return (
        isinstance(base, type)
        and issubclass(base, getattr(collections.abc, name))
        and (base not in (str, bytes))
    )


def describe(annotation: Any) -> str:
    """Say in words what a value of ``annotation`` looks like."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        parts = [a for a in typing.get_args(annotation) if a is not type(None)]
        words = " or ".join(describe(a) for a in parts)
        return f"{words} or null" if len(parts) < len(typing.get_args(annotation)) else words
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in typing.get_args(annotation))
    names = {bool: "true or false", int: "an integer", float: "a number", str: "a text"}
    if annotation in names:
        return names[annotation]
    if annotation is Path:
        return "a path"
    base = origin or annotation
    if base is dict or _abc(base, "Mapping"):
        return "a mapping {key: value}"
    if base in (list, tuple, set, frozenset) or _abc(base, "Sequence"):
        return "a list [a, b]"
    return getattr(annotation, "__name__", str(annotation))
