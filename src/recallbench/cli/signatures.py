"""What a callable accepts, read from its signature: the pre-run checks of config values.

``check_arguments`` holds a config node's keys against a constructor's parameters (following
``**params`` up the class's ``__init__`` chain) and each value against the parameter's
annotation (``fits``), with the expectation in words (``describe``) for the error line.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from recallbench.errors import ConfigError, did_you_mean


def hint(name: str, options: list[str]) -> str:
    """``Did you mean 'k'? Options: ...`` for a misspelt key."""
    message = str(did_you_mean("key", name, options))
    return message[message.index(".") + 2 :] if ". " in message else message


def check_arguments(
    fn: Callable[..., object], arguments: Mapping[str, object], where: str, injected: set[str]
) -> None:
    """Each key of ``arguments`` is a parameter of ``fn`` and its value fits the annotation."""
    params, hints, open_ended = parameters(fn)
    for name in injected | {"self"}:
        params.pop(name, None)
    for key, value in arguments.items():
        if key not in params:
            if open_ended:
                continue
            raise ConfigError(f"{where}.{key}={value!r}: no such key. {hint(key, list(params))}")
        if key in hints:
            check_value(f"{where}.{key}", value, hints[key])
        elif params[key].default not in (None, inspect.Parameter.empty):
            check_value(f"{where}.{key}", value, type(params[key].default))


def parameters(
    fn: Callable[..., object],
) -> tuple[dict[str, inspect.Parameter], dict[str, object], bool]:
    """Named parameters and annotations of ``fn``; for a class, those of every ``__init__`` up
    its MRO while each passes ``**params`` on to ``super().__init__`` (the house pattern of
    memory methods over ``MemoryMethod``), or, for a class that names it in ``KEYWORDS_TO``,
    those of the callable its ``**keys`` go to. The flag says whether unknown keys are accepted."""
    params: dict[str, inspect.Parameter] = {}
    hints: dict[str, object] = {}
    inits = [fn]
    keywords_to = getattr(fn, "KEYWORDS_TO", None) if isinstance(fn, type) else None
    if isinstance(fn, type) and keywords_to is not None:
        # a class that hands its ``**keys`` to another callable (TimeRAG's Policy) says so
        inits = [fn.__dict__["__init__"], keywords_to]
    elif isinstance(fn, type):
        inits = [c.__dict__["__init__"] for c in fn.__mro__ if "__init__" in c.__dict__]
    for init in inits:
        if init is object.__init__:
            return params, hints, True
        if isinstance(init, type):  # a dataclass that takes the keys
            init = inspect.getattr_static(init, "__init__")
        own = inspect.signature(init).parameters
        for name, param in own.items():
            if param.kind not in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
                params.setdefault(name, param)
        for name, hint in _hints(init).items():
            hints.setdefault(name, hint)
        if not any(p.kind is p.VAR_KEYWORD for p in own.values()):
            return params, hints, False
    return params, hints, True


def _hints(fn: Callable[..., object]) -> dict[str, object]:
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


def check_value(key: str, value: object, annotation: object) -> None:
    if not fits(value, annotation):
        raise ConfigError(f"{key}={value!r}: expected {describe(annotation)}")


def fits(value: object, annotation: object) -> bool:
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


def _abc(base: object, name: str) -> bool:
    import collections.abc

    return (
        isinstance(base, type)
        and issubclass(base, getattr(collections.abc, name))
        and (base not in (str, bytes))
    )


def describe(annotation: object) -> str:
    """Say in words what a value of ``annotation`` looks like."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        parts = [a for a in typing.get_args(annotation) if a is not type(None)]
        words = " or ".join(describe(a) for a in parts)
        return f"{words} or null" if len(parts) < len(typing.get_args(annotation)) else words
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in typing.get_args(annotation))
    names = {bool: "true or false", int: "an integer", float: "a number", str: "a text"}
    if isinstance(annotation, type) and annotation in names:
        return names[annotation]
    if annotation is Path:
        return "a path"
    base = origin or annotation
    if base is dict or _abc(base, "Mapping"):
        return "a mapping {key: value}"
    if base in (list, tuple, set, frozenset) or _abc(base, "Sequence"):
        return "a list [a, b]"
    return getattr(annotation, "__name__", str(annotation))
