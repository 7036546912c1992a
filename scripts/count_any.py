"""Count the public functions whose signature takes or returns ``Any`` (issue 36's measure).

Public: a module-level function or a method of a module-level class, whose name (and its class's
name) has no leading underscore; functions nested in functions are not counted. A signature
"has Any" when a parameter's or the return's annotation names ``Any`` anywhere (``Any``,
``dict[str, Any]``, ``Callable[..., Any]``) or a bare generic (``dict``, ``list``, ``Mapping``,
``Callable``...: its parameters are ``Any``). ``*args``/``**kwargs: Any`` are counted apart too,
since a keyword bag of template fields is ``Any`` by nature. Parsed with ``ast``: nothing is
imported.

    python scripts/count_any.py [ROOT]          # default: src/recallbench
    git worktree add /tmp/base 1b6a856 && python scripts/count_any.py /tmp/base/src/recallbench
"""

from __future__ import annotations

import argparse
import ast
from collections.abc import Iterator
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


def _bare_generics(node: ast.expr) -> bool:
    subscripted = {id(n.value) for n in ast.walk(node) if isinstance(n, ast.Subscript)}
    for sub in ast.walk(node):
        name = sub.id if isinstance(sub, ast.Name) else getattr(sub, "attr", None)
        if name in BARE_GENERICS and id(sub) not in subscripted:
            return True
    return False


def _names_any(node: ast.expr | None) -> bool:
    if node is None:
        return False
    if _bare_generics(node):
        return True
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id == "Any":
            return True
        if isinstance(sub, ast.Attribute) and sub.attr == "Any":
            return True
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):  # a quoted annotation
            try:
                if _names_any(ast.parse(sub.value, mode="eval").body):
                    return True
            except SyntaxError:
                continue
    return False


Function = ast.FunctionDef | ast.AsyncFunctionDef


def public_functions(tree: ast.Module) -> Iterator[Function]:
    """Module-level public functions and public methods of public module-level classes."""
    for node in tree.body:
        if isinstance(node, Function) and not node.name.startswith("_"):
            yield node
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if isinstance(item, Function) and not item.name.startswith("_"):
                    yield item


def signature_any(fn: Function) -> tuple[bool, bool]:
    """(any annotation names Any, one other than ``*args``/``**kwargs`` does)."""
    a = fn.args
    named = [*a.posonlyargs, *a.args, *a.kwonlyargs]
    fixed = any(_names_any(p.annotation) for p in named) or _names_any(fn.returns)
    bags = [p for p in (a.vararg, a.kwarg) if p is not None]
    return fixed or any(_names_any(p.annotation) for p in bags), fixed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default="src/recallbench", type=Path)
    parser.add_argument("--list", action="store_true", help="print each function with Any")
    args = parser.parse_args()
    total = with_any = fixed_any = 0
    for path in sorted(args.root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for fn in public_functions(tree):
            total += 1
            some, fixed = signature_any(fn)
            if args.list and some:
                print(f"{path.relative_to(args.root)}:{fn.lineno} {fn.name}")
            with_any += some
            fixed_any += fixed
    print(f"public functions: {total}")
    print(f"take or return Any: {with_any} ({with_any / max(total, 1):.1%})")
    print(f"  not counting *args/**kwargs: Any: {fixed_any} ({fixed_any / max(total, 1):.1%})")


if __name__ == "__main__":
    main()
