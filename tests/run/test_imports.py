"""Which modules of a process one job could reach (``run.imports``): both ways.

Reached: a module-level import, an import inside a function (lazy), a relative import, the
parent packages of what is imported, a module a config path names. Not reached: a module of
the same process that only another job's config names (another method of a sweep).
"""

from __future__ import annotations

import types
from pathlib import Path

from recallbench.run.imports import config_paths, reachable

SOURCES = {
    "pkg/__init__.py": "",
    "pkg/core.py": "from pkg import util\n",
    "pkg/util.py": "def f():\n    from .lazy import g\n    return g\n",
    "pkg/lazy.py": "",
    "pkg/methods/__init__.py": "",
    "pkg/methods/a.py": "from ..core import *\n",
    "pkg/methods/b.py": "import pkg.methods.shared\n",
    "pkg/methods/shared.py": "",
}


def _modules(tmp: Path) -> dict[str, types.ModuleType]:
    found = {}
    for rel, text in SOURCES.items():
        path = tmp / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        name = rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        module = types.ModuleType(name)
        module.__file__ = str(path)
        found[name] = module
    return found


def test_a_job_reaches_its_imports_and_its_config_paths_only(tmp_path):
    modules = _modules(tmp_path)
    job_a = reachable(["pkg.methods.a.A"], modules)  # a _target_: a module's attribute
    assert job_a == {"pkg", "pkg.core", "pkg.util", "pkg.lazy", "pkg.methods", "pkg.methods.a"}
    job_b = reachable(["pkg.methods.b.B"], modules)
    assert job_b == {"pkg", "pkg.methods", "pkg.methods.b", "pkg.methods.shared"}


def test_config_paths_are_the_dotted_recallbench_strings():
    config = {"memory": {"_target_": "recallbench.memory.lufy.Lufy", "k": 3}, "tags": ["x"]}
    config["dataset"] = {"_target_": "recallbench.datasets.msc.load", "name": "msc"}
    assert config_paths(config) == {"recallbench.memory.lufy.Lufy", "recallbench.datasets.msc.load"}
