"""Count the public functions and class fields typed ``Any`` (issues 36 and 47's measure).

Public: a module-level function or a method of a module-level class, whose name (and its class's
name) has no leading underscore; functions nested in functions are not counted. A signature
"has Any" when a parameter's or the return's annotation names ``Any`` anywhere (``Any``,
``dict[str, Any]``, ``Callable[..., Any]``), a bare generic (``dict``, ``list``, ``Mapping``,
``Callable``...: its parameters are ``Any``) or an alias of ``Any``. ``*args``/``**kwargs: Any``
are counted apart too, since a keyword bag of template fields is ``Any`` by nature.

An alias of ``Any`` is a module-level ``X = <type>``, ``X: TypeAlias = <type>`` or (Python 3.12)
``type X = <type>`` whose type has ``Any`` by the rule above (``JSON = Any``,
``Row = dict[str, Any]``, ``Rows = list[Row]``). Aliases resolve across the whole package the
counted folder belongs to: ``from recallbench.records import JSON`` (also relative and
re-exported imports) and ``records.JSON`` after ``import recallbench.records as records``.
A function counted only because of an alias is reported on a line of its own.

Public class fields: the annotated attributes in the body of a public module-level class
(dataclass, TypedDict and NamedTuple fields, Protocol attributes, ``ClassVar``), whose name has no
leading underscore. A field "has Any" by the same rule as a signature's annotation, so a bare
``dict`` or ``list`` field counts. Attributes set in ``__init__`` are not fields here.

The last line is the share of functions and fields together that have ``Any``: issue 47's
measure (at most 8%). Parsed with ``ast``: nothing is imported.

    python scripts/count_any.py [ROOT] [--list]   # default: src/recallbench
    git worktree add /tmp/base 1b6a856 && python scripts/count_any.py /tmp/base/src/recallbench
"""

from __future__ import annotations

import argparse
import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

# Generic types whose bare name means "of Any" (``dict`` is ``dict[Any, Any]``).
BARE_GENERICS = {
    "dict",
    "list",
    "tuple",
    "set",
    "frozenset",
    "type",
    "Mapping",
    "MutableMapping",
    "Sequence",
    "Iterable",
    "Iterator",
    "Callable",
    "Collection",
    "partial",
    "Dict",
    "List",
    "Tuple",
    "Set",
}

Function = ast.FunctionDef | ast.AsyncFunctionDef
# An alias's value: only type-shaped expressions (a call such as ``dict(a=1)`` is a value).
_TYPE_SHAPED = (ast.Name, ast.Attribute, ast.Subscript, ast.BinOp, ast.Constant)


@dataclass
class Module:
    """One parsed module: its dotted name, tree, aliases and what its names import."""

    name: str
    path: Path
    tree: ast.Module
    aliases: dict[str, ast.expr] = field(default_factory=dict)
    imports: dict[str, tuple[str, str]] = field(default_factory=dict)  # local -> (module, name)
    modules: dict[str, str] = field(default_factory=dict)  # local -> module (``import a.b as m``)


def _alias_value(node: ast.stmt) -> tuple[str, ast.expr] | None:
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Name) and isinstance(value, _TYPE_SHAPED):
            return target.id, value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
        kind = node.annotation
        name = kind.id if isinstance(kind, ast.Name) else getattr(kind, "attr", "")
        if name == "TypeAlias":
            return node.target.id, node.value
    type_alias = getattr(ast, "TypeAlias", None)  # ``type X = ...``: Python 3.12+
    if type_alias is not None and isinstance(node, type_alias):
        return node.name.id, node.value
    return None


def _absolute(module: str, is_package: bool, level: int, target: str | None) -> str:
    if level == 0:
        return target or ""
    parts = module.split(".")
    base = parts[: len(parts) - level + (1 if is_package else 0)]
    return ".".join(base + ([target] if target else []))


def parse_module(name: str, path: Path, source: str) -> Module:
    """Parse ``source`` and collect its module-level aliases and imported names."""
    mod = Module(name, path, ast.parse(source, filename=str(path)))
    is_package = path.name == "__init__.py"
    for node in mod.tree.body:
        if (found := _alias_value(node)) is not None:
            mod.aliases[found[0]] = found[1]
        elif isinstance(node, ast.ImportFrom):
            origin = _absolute(name, is_package, node.level, node.module)
            for a in node.names:
                mod.imports[a.asname or a.name] = (origin, a.name)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    mod.modules[a.asname] = a.name
    return mod


class Resolver:
    """Which names are aliases of ``Any``, across every module of a package."""

    def __init__(self, modules: dict[str, Module]) -> None:
        self.modules = modules
        self._done: dict[tuple[str, str], bool] = {}

    def is_any_alias(self, module: str, name: str, seen: frozenset[tuple[str, str]]) -> bool:
        key = (module, name)
        if key in self._done:
            return self._done[key]
        mod = self.modules.get(module)
        if mod is None or key in seen:  # outside the package, or a recursive alias
            return False
        if name in mod.aliases:
            found = self.names_any(mod, mod.aliases[name], seen | {key})
        elif name in mod.imports:
            origin, original = mod.imports[name]
            found = self.is_any_alias(origin, original, seen | {key})
        else:
            found = False
        self._done[key] = found
        return found

    def _names_alias(self, mod: Module, node: ast.expr, seen: frozenset[tuple[str, str]]) -> bool:
        if isinstance(node, ast.Name):
            return self.is_any_alias(mod.name, node.id, seen)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            module = mod.modules.get(node.value.id)
            if module is None and node.value.id in mod.imports:  # ``from pkg import module``
                module = ".".join(mod.imports[node.value.id])
            return module is not None and self.is_any_alias(module, node.attr, seen)
        return False

    def names_any(
        self, mod: Module, node: ast.expr | None, seen: frozenset[tuple[str, str]] = frozenset()
    ) -> bool:
        """Whether annotation ``node`` in ``mod`` has Any (directly, bare or via an alias)."""
        return direct_any(node) or self.via_alias(mod, node, seen)

    def via_alias(
        self, mod: Module, node: ast.expr | None, seen: frozenset[tuple[str, str]] = frozenset()
    ) -> bool:
        """Whether annotation ``node`` names an alias of Any (quoted annotations included)."""
        for sub in ast.walk(node) if node is not None else ():
            if self._names_alias(mod, sub, seen):
                return True
            if (quoted := _quoted(sub)) is not None and self.via_alias(mod, quoted, seen):
                return True
        return False


def _quoted(node: ast.AST) -> ast.expr | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return None
    return None


def _bare_generics(node: ast.expr) -> bool:
    subscripted = {id(n.value) for n in ast.walk(node) if isinstance(n, ast.Subscript)}
    for sub in ast.walk(node):
        name = sub.id if isinstance(sub, ast.Name) else getattr(sub, "attr", None)
        if name in BARE_GENERICS and id(sub) not in subscripted:
            return True
    return False


def direct_any(node: ast.expr | None) -> bool:
    """Whether annotation ``node`` names ``Any`` or a bare generic, without resolving aliases."""
    if node is None:
        return False
    if _bare_generics(node):
        return True
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id == "Any":
            return True
        if isinstance(sub, ast.Attribute) and sub.attr == "Any":
            return True
        if (quoted := _quoted(sub)) is not None and direct_any(quoted):
            return True
    return False


def public_functions(tree: ast.Module) -> Iterator[Function]:
    """Module-level public functions and public methods of public module-level classes."""
    for node in tree.body:
        if isinstance(node, Function) and not node.name.startswith("_"):
            yield node
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if isinstance(item, Function) and not item.name.startswith("_"):
                    yield item


def public_fields(tree: ast.Module) -> Iterator[tuple[str, ast.AnnAssign]]:
    """(class name, field) for each annotated public attribute of a public module-level class."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if (
                    isinstance(item, ast.AnnAssign)
                    and isinstance(item.target, ast.Name)
                    and not item.target.id.startswith("_")
                ):
                    yield node.name, item


@dataclass
class Counts:
    """What ``count`` found; ``listed`` holds one line per function or field with Any."""

    functions: int = 0
    with_any: int = 0  # aliases included
    fixed_any: int = 0  # not counting ``*args``/``**kwargs``
    alias_only: int = 0  # has Any only through an alias
    fields: int = 0
    fields_any: int = 0
    listed: list[str] = field(default_factory=list)


def _signature(fn: Function) -> tuple[list[ast.expr | None], list[ast.expr | None]]:
    a = fn.args
    fixed = [p.annotation for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)] + [fn.returns]
    return fixed, [p.annotation for p in (a.vararg, a.kwarg) if p is not None]


def count_module(mod: Module, resolver: Resolver, into: Counts, where: str) -> None:
    """Add ``mod``'s public functions and fields to ``into``."""
    for fn in public_functions(mod.tree):
        fixed, bags = _signature(fn)
        direct = any(direct_any(n) for n in fixed + bags)
        fixed_any = any(resolver.names_any(mod, n) for n in fixed)
        some = fixed_any or any(resolver.names_any(mod, n) for n in bags)
        into.functions += 1
        into.with_any += some
        into.fixed_any += fixed_any
        into.alias_only += some and not direct
        if some:
            note = "" if direct else "  (alias)"
            into.listed.append(f"{where}:{fn.lineno} {fn.name}{note}")
    for cls, item in public_fields(mod.tree):
        into.fields += 1
        if resolver.names_any(mod, item.annotation):
            into.fields_any += 1
            name = ast.unparse(item.target)
            into.listed.append(f"{where}:{item.lineno} {cls}.{name}  (field)")


def package_top(root: Path) -> Path:
    """The outermost package folder containing ``root`` (aliases resolve across all of it)."""
    top = root.resolve()
    while (top.parent / "__init__.py").exists():
        top = top.parent
    return top


def load_package(top: Path) -> dict[str, Module]:
    """Parse every module under package folder ``top``, keyed by dotted name."""
    modules = {}
    for path in sorted(top.rglob("*.py")):
        parts = [top.name, *path.relative_to(top).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        name = ".".join(parts)
        modules[name] = parse_module(name, path, path.read_text(encoding="utf-8"))
    return modules


def count(root: Path) -> Counts:
    """Count the public functions and fields of every module under ``root``."""
    root = root.resolve()
    modules = load_package(package_top(root))
    resolver, counts = Resolver(modules), Counts()
    for mod in modules.values():
        if mod.path.is_relative_to(root):
            count_module(mod, resolver, counts, str(mod.path.relative_to(root)))
    return counts


def _share(part: int, whole: int) -> str:
    return f"{part} ({part / max(whole, 1):.1%})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default="src/recallbench", type=Path)
    parser.add_argument("--list", action="store_true", help="print each function or field with Any")
    args = parser.parse_args()
    c = count(args.root)
    if args.list:
        print("\n".join(sorted(c.listed)))
    print(f"public functions: {c.functions}")
    print(f"take or return Any: {_share(c.with_any, c.functions)}")
    print(f"  not counting *args/**kwargs: Any: {_share(c.fixed_any, c.functions)}")
    print(f"  only through an alias of Any: {c.alias_only}")
    print(f"public class fields: {c.fields}")
    print(f"typed Any or a bare generic: {_share(c.fields_any, c.fields)}")
    total = c.functions + c.fields
    print(f"functions and fields with Any: {_share(c.with_any + c.fields_any, total)} of {total}")


if __name__ == "__main__":
    main()
