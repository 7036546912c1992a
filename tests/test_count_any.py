"""``scripts/count_any.py``: Any in signatures, aliases of Any (also imported) and public fields."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parents[1] / "scripts" / "count_any.py"
_spec = importlib.util.spec_from_file_location("count_any", SCRIPT)
assert _spec is not None and _spec.loader is not None
count_any = importlib.util.module_from_spec(_spec)
sys.modules["count_any"] = count_any  # dataclasses look their module up by name
_spec.loader.exec_module(count_any)


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    top = tmp_path / "pkg"
    for name, source in {"__init__.py": "", **files}.items():
        path = top / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source), encoding="utf-8")
    return top


def _listed(root: Path) -> list[str]:
    """Each listed function or field without its path and line."""
    return sorted(line.split(" ", 1)[1] for line in count_any.count(root).listed)


def test_direct_any_and_bare_generics_count_but_precise_types_do_not(tmp_path):
    top = _package(
        tmp_path,
        {
            "m.py": """
                from typing import Any
                def a(x: Any) -> int: ...
                def b(x: dict) -> int: ...
                def c(x: dict[str, int]) -> "list[Any]": ...
                def d(x: dict[str, int]) -> list[str]: ...
                def e(*fields: Any) -> str: ...
                def _private(x: Any) -> Any: ...
            """
        },
    )
    counts = count_any.count(top)
    assert (counts.functions, counts.with_any, counts.fixed_any) == (5, 4, 3)
    assert _listed(top) == ["a", "b", "c", "e"]


def test_an_alias_of_any_counts_where_it_is_used(tmp_path):
    top = _package(
        tmp_path,
        {
            "m.py": """
                from typing import Any, TypeAlias
                JSON = Any
                Row: TypeAlias = dict[str, Any]
                Rows = list[Row]
                Message = dict[str, str]
                def a(x: JSON) -> int: ...
                def b(x: int) -> Rows: ...
                def c(x: Message) -> int: ...
                def d(x: "Row") -> int: ...
                DEFAULTS = dict(a=1)
                def e(x: int) -> int: ...
            """
        },
    )
    counts = count_any.count(top)
    assert (counts.functions, counts.with_any, counts.alias_only) == (5, 3, 3)
    assert _listed(top) == ["a  (alias)", "b  (alias)", "d  (alias)"]


def test_an_imported_alias_resolves_across_the_package(tmp_path):
    top = _package(
        tmp_path,
        {
            "records.py": "from typing import Any\nJSON = Any\nName = str\n",
            "sub/__init__.py": "from pkg.records import JSON as Free\n",  # a re-export
            "sub/a.py": """
                from pkg.records import JSON, Name
                from ..records import JSON as J2
                from pkg.sub import Free
                import pkg.records as rec
                from pkg import records
                def by_name(x: JSON) -> Name: ...
                def relative(x: J2) -> int: ...
                def reexported(x: int) -> list[Free]: ...
                def attribute(x: rec.JSON) -> int: ...
                def from_module(x: records.JSON) -> int: ...
                def fine(x: Name) -> records.Name: ...
            """,
        },
    )
    # Counting only pkg/sub still resolves the alias defined in pkg/records.py.
    names = ["attribute", "by_name", "from_module", "reexported", "relative"]
    assert _listed(top / "sub") == [f"{n}  (alias)" for n in names]


def test_a_recursive_alias_ends_and_has_no_any(tmp_path):
    top = _package(
        tmp_path,
        {"m.py": 'Tree = dict[str, "Tree"] | list["Tree"] | int\ndef f(x: Tree) -> Tree: ...\n'},
    )
    assert count_any.count(top).with_any == 0


def test_public_fields_typed_any_or_a_bare_generic_count(tmp_path):
    top = _package(
        tmp_path,
        {
            "m.py": """
                from dataclasses import dataclass
                from typing import Any, NamedTuple, TypedDict
                JSON = Any
                @dataclass
                class Record:
                    id: str
                    meta: dict
                    extra: dict[str, JSON]
                    _cache: Any = None
                class Shape(TypedDict):
                    rows: list
                    name: str
                class Pair(NamedTuple):
                    left: Any
                    right: int
                class _Hidden:
                    stuff: Any
            """
        },
    )
    counts = count_any.count(top)
    assert (counts.fields, counts.fields_any, counts.functions) == (7, 4, 0)
    fields = ["Pair.left", "Record.extra", "Record.meta", "Shape.rows"]
    assert _listed(top) == [f"{f}  (field)" for f in fields]


def test_nested_functions_and_methods_of_private_classes_are_not_counted(tmp_path):
    top = _package(
        tmp_path,
        {
            "m.py": """
                from typing import Any
                def outer(x: int) -> int:
                    def inner(y: Any) -> Any: ...
                    return x
                class Public:
                    def method(self, y: Any) -> None: ...
                    def _helper(self, y: Any) -> None: ...
                class _Private:
                    def method(self, y: Any) -> None: ...
            """
        },
    )
    counts = count_any.count(top)
    assert (counts.functions, counts.with_any) == (2, 1)
    assert _listed(top) == ["method"]


@pytest.mark.skipif(sys.version_info < (3, 12), reason="`type X = ...` parses from Python 3.12")
def test_a_type_statement_alias_counts(tmp_path):
    top = _package(
        tmp_path, {"m.py": "from typing import Any\ntype J = Any\ndef f(x: J) -> int: ..."}
    )
    assert count_any.count(top).alias_only == 1


def test_the_script_prints_the_share_of_functions_and_fields(tmp_path):
    top = _package(
        tmp_path,
        {"m.py": "from typing import Any\nclass C:\n    x: Any\n    def f(self) -> int: ...\n"},
    )
    out = subprocess.run(
        [sys.executable, str(SCRIPT), str(top)], capture_output=True, text=True, check=True
    ).stdout
    assert "public functions: 1\n" in out and "public class fields: 1\n" in out
    assert out.rstrip().endswith("functions and fields with Any: 1 (50.0%) of 2")
