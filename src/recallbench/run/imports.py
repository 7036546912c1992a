"""Which of a process's project modules one job could have run: the import graph from its roots.

A process that runs several jobs (a sweep on Hydra's basic launcher, a matrix) has imported the
modules of all of them, and its command checks import every swept method's class before the
first job starts, so ``sys.modules`` alone would key every job of a sweep on every method of it.
A job can run a module's code only when something reaches that module: an import statement (at
module level or inside a function: both are edges here) in a module the job can reach, or a
dotted path in its config (Hydra's ``_target_``, a dataset's loader). So a job's modules are the
project modules this process imported that the static import graph (``ast``: ``import`` and
``from ... import`` anywhere in a module, relative ones resolved, with their parent packages)
reaches from the entry points and from every dotted ``recallbench.`` path of the job's config
(``reachable``). Code reached only through an object another job left in shared process state
is not seen (docs/running.md says so).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from recallbench.io import not_reads

ENTRY = ("__main__", "recallbench.cli", "recallbench.cli.job", "recallbench.run.runner")
_parsed: dict[tuple[str, int, int], frozenset[str]] = {}  # (file, mtime_ns, size) -> imports


def _package(name: str, module: object) -> str:
    """The package a module's relative imports resolve against."""
    spec = getattr(module, "__spec__", None)
    if name == "__main__" and spec is not None:
        name = spec.name
    if str(getattr(module, "__file__", "")).endswith("__init__.py"):
        return name
    return name.rpartition(".")[0]


def _imports(name: str, module: object) -> frozenset[str]:
    """The module names the source of ``module`` imports anywhere in its body (cached)."""
    origin = getattr(module, "__file__", None)
    if not isinstance(origin, str) or not origin.endswith(".py"):
        return frozenset()
    try:
        stat = Path(origin).stat()
        key = (origin, stat.st_mtime_ns, stat.st_size)
        if key not in _parsed:
            with not_reads():  # parsing a module is not reading an input
                source = Path(origin).read_bytes()
            _parsed[key] = _names(ast.parse(source), _package(name, module))
    except (OSError, SyntaxError, ValueError):
        return frozenset()
    return _parsed[key]


def _names(tree: ast.AST, package: str) -> frozenset[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: max(0, len(package.split(".")) - node.level + 1)]
                base = ".".join([*parts, base] if base else parts)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)  # a submodule, maybe
    return frozenset(found)


def config_paths(config: object) -> set[str]:
    """Every string of a config that could name a module (``recallbench.`` dotted paths)."""
    if isinstance(config, Mapping):
        return {p for v in config.values() for p in config_paths(v)}
    if isinstance(config, list | tuple):
        return {p for v in config for p in config_paths(v)}
    return {config} if isinstance(config, str) and config.startswith("recallbench.") else set()


def _prefixes(name: str) -> list[str]:
    """``a.b.c`` -> ``a``, ``a.b``, ``a.b.c``: importing a module runs its parents too."""
    parts = name.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def reachable(roots: Iterable[str], modules: Mapping[str, object] | None = None) -> set[str]:
    """The names of ``modules`` (default ``sys.modules``) that import statements reach from
    ``roots`` (dotted paths: a module, or a module's attribute) and from ``ENTRY``."""
    modules = dict(sys.modules) if modules is None else modules
    todo = [p for root in (*ENTRY, *roots) for p in _prefixes(root)]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen or name not in modules:
            continue
        seen.add(name)
        todo += [p for dep in _imports(name, modules[name]) for p in _prefixes(dep)]
    return seen
