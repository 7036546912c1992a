"""The import contract (docs/architecture.md): layers, no cycles, no reach into another package's
private modules or names. ``lint-imports`` checks the layer contracts of pyproject.toml; the
cycle and privacy rules are AST checks here (import-linter has no privacy contract)."""

from __future__ import annotations

import ast
import graphlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PKG = SRC / "recallbench"


def _modules() -> dict[str, Path]:
    mods = {}
    for path in PKG.rglob("*.py"):
        parts = path.relative_to(SRC).with_suffix("").parts
        if "conf" in parts:
            continue
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        mods[name] = path
    return mods


MODULES = _modules()


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path):
    """Yield (imported module, imported names) of every import in ``path`` (functions and
    ``if TYPE_CHECKING:`` blocks included)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, ()
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            yield base, tuple(a.name for a in node.names)


def test_no_import_cycles():
    """No cycle among imports, type-only ones (``if TYPE_CHECKING:``) included: the last one
    (``llm.types`` -> ``llm.task`` -> ``llm.types``, through the ``LLMClient`` protocol) went
    when the protocol moved to ``llm.protocol``."""
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for module, path in MODULES.items():
        for target, names in _imports(module, path):
            if not target.startswith("recallbench"):
                continue
            for name in (target, *(f"{target}.{n}" for n in names)):
                resolved = _resolve(name)
                if resolved and resolved != module and MODULES[resolved].name != "__init__.py":
                    graph[module].add(resolved)
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        pytest.fail(f"import cycle: {' -> '.join(exc.args[1])}")


def _private_owner(target: str) -> str | None:
    """Return the package that owns the first private component of ``target`` (None: public)."""
    parts = target.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return None


def test_no_reach_into_another_packages_private_parts():
    bad = []
    for module, path in MODULES.items():
        for target, names in _imports(module, path):
            if not target.startswith("recallbench"):
                continue
            owner = _private_owner(target)
            if owner is not None and module != owner and not module.startswith(owner + "."):
                bad.append(f"{module} imports private module {target}")
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if (
                private
                and _resolve(target) == target
                and module.rpartition(".")[0]
                != (target if MODULES[target].name == "__init__.py" else target.rpartition(".")[0])
            ):
                bad.append(f"{module} imports private names {private} from {target}")
    assert not bad, "\n".join(bad)


@pytest.mark.skipif(
    shutil.which("lint-imports") is None
    and not (Path(sys.executable).parent / "lint-imports").exists(),
    reason="import-linter not installed",
)
def test_layer_contracts_hold():
    exe = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    done = subprocess.run(
        [exe, "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


# Module size: past ~300 lines a module is split by responsibility (docs/architecture.md), not
# packed. The aim is 300; a module may reach MAX_LINES while it grows, and past that only the
# modules below may stay, each at most its recorded size (they shrink, never grow):
MAX_LINES = 330
OVERSIZED: dict[str, int] = {}  # none left: every module is within MAX_LINES (issue 9)


def test_no_module_grows_past_the_size_limit():
    sizes = {
        name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in MODULES.items()
    }
    over = {name: n for name, n in sizes.items() if n > OVERSIZED.get(name, MAX_LINES)}
    assert not over, (
        f"modules over {MAX_LINES} lines (or past their recorded size): {over}; split them by "
        "responsibility (docs/architecture.md)"
    )
    stale = {name for name in OVERSIZED if sizes.get(name, 0) <= MAX_LINES}
    assert not stale, f"now within {MAX_LINES} lines: drop from OVERSIZED: {sorted(stale)}"


def test_every_paper_package_is_in_the_independence_contract():
    """A new papers/<key>/ joins the "paper packages do not import each other" contract."""
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (independent,) = [c for c in contracts["contracts"] if c["type"] == "independence"]
    papers = SRC / "recallbench" / "papers"
    on_disk = {
        f"recallbench.papers.{p.name}" for p in papers.iterdir() if (p / "__init__.py").is_file()
    }
    assert set(independent["modules"]) == on_disk


# One package per unit (issue 36): a memory method or a protocol is one folder, named by its
# config, and the roots hold only the contract. The checks take the folders as arguments so the
# tests below can show each one failing on a tree that breaks it.
MEMORY_ROOT_FILES = {"__init__.py", "_base.py", "_abilities.py"}  # the contract, the abilities
MEMORY_SHARED = "blocks"  # the one package of parts several methods share
PROTOCOL_ROOT_FILES = {"__init__.py", "base.py", "evidence.py"}  # the contract, shared evidence
# Protocol configs whose stem is neither their package nor "<package>_<variant>" (a paper's
# setting of a protocol, e.g. response_carecall -> response): the documented exceptions.
PROTOCOL_STEMS = {
    "locomo_qa": "locomo",  # LoCoMo's QA protocol; `locomo` is also the dataset and paper name
    "response_timerag": "timerag",  # TimeRAG's responses protocol, a ResponseProtocol subclass
}


def _config_target(conf: Path, stem: str, seen: tuple[str, ...] = ()) -> str | None:
    """The ``_target_`` a group config builds: its own, else the last of its ``defaults``."""
    import yaml

    if stem in seen:
        raise AssertionError(f"{conf / stem}.yaml: defaults cycle {seen}")
    data = yaml.safe_load((conf / f"{stem}.yaml").read_text(encoding="utf-8")) or {}
    if "_target_" in data:
        return str(data["_target_"])
    for entry in reversed(data.get("defaults") or []):
        if isinstance(entry, str) and entry != "_self_" and (conf / f"{entry}.yaml").is_file():
            target = _config_target(conf, entry, (*seen, stem))
            if target is not None:
                return target
    return None


def _unit_targets(conf: Path, package: str) -> dict[str, str | None]:
    """Map every choice of a config group (``_``-files are parts, not choices) to the package
    under ``package`` its ``_target_`` names (None: it names none)."""
    units = {}
    for path in sorted(conf.glob("*.yaml")):
        if path.stem.startswith("_"):
            continue
        target = _config_target(conf, path.stem) or ""
        head, _, rest = target.partition(package + ".")
        units[path.stem] = rest.split(".")[0] if not head and rest.count(".") >= 1 else None
    return units


def _packages(root: Path) -> set[str]:
    return {p.name for p in root.iterdir() if p.is_dir() and p.name != "__pycache__"}


def memory_layout_problems(root: Path, conf: Path) -> list[str]:
    """What breaks "one package per method" in ``root`` (memory/) given ``conf`` (conf/memory)."""
    bad = []
    loose = sorted(p.name for p in root.glob("*.py") if p.name not in MEMORY_ROOT_FILES)
    if loose:
        bad.append(
            f"memory/ root holds {loose}: a method goes in memory/<stem>/, a shared part "
            f"in memory/{MEMORY_SHARED}/ (only {sorted(MEMORY_ROOT_FILES)} stay)"
        )
    packages = _packages(root)
    targets = _unit_targets(conf, "recallbench.memory")
    for stem, package in targets.items():
        if package is None or package == MEMORY_SHARED or package not in packages:
            bad.append(
                f"conf/memory/{stem}.yaml: _target_ must name a class of a method package "
                f"recallbench.memory.<stem>.<Class>, got package {package!r}"
            )
        elif package not in targets:
            bad.append(
                f"conf/memory/{stem}.yaml targets memory/{package}/, which has no "
                f"conf/memory/{package}.yaml of its own (stem = config = CLI choice)"
            )
    for package in sorted(packages - {MEMORY_SHARED}):
        if not (root / package / "__init__.py").is_file():
            bad.append(f"memory/{package}/ has no __init__.py")
        if targets.get(package) != package:
            bad.append(
                f"memory/{package}/ is not a method: conf/memory/{package}.yaml must target "
                f"it (a part several methods share belongs in memory/{MEMORY_SHARED}/)"
            )
    return bad


def protocol_layout_problems(root: Path, conf: Path) -> list[str]:
    """What breaks "one package per protocol" in ``root`` (protocols/) given conf/protocol."""
    bad = []
    loose = sorted(p.name for p in root.glob("*.py") if p.name not in PROTOCOL_ROOT_FILES)
    if loose:
        bad.append(
            f"protocols/ root holds {loose}: a protocol and its scoring go together in "
            f"protocols/<name>/ (no *_scores.py beside it; only "
            f"{sorted(PROTOCOL_ROOT_FILES)} stay)"
        )
    packages = _packages(root)
    targets = _unit_targets(conf, "recallbench.protocols")
    for stem, package in targets.items():
        if package is None or package not in packages:
            bad.append(
                f"conf/protocol/{stem}.yaml: _target_ must name a class of a protocol "
                f"package recallbench.protocols.<name>.<Class>, got package {package!r}"
            )
        elif stem != package and not stem.startswith(package + "_"):
            if PROTOCOL_STEMS.get(stem) != package:
                bad.append(
                    f"conf/protocol/{stem}.yaml targets protocols/{package}/: name it "
                    f"{package}.yaml or {package}_<variant>.yaml, or document the "
                    f"mapping in PROTOCOL_STEMS"
                )
    for package in sorted(packages):
        if not (root / package / "__init__.py").is_file():
            bad.append(f"protocols/{package}/ has no __init__.py")
        if package not in targets.values():
            bad.append(f"protocols/{package}/ is the _target_ of no conf/protocol config")
    return bad


def test_one_package_per_memory_method():
    problems = memory_layout_problems(PKG / "memory", ROOT / "conf" / "memory")
    assert not problems, "\n".join(problems)


def test_one_package_per_protocol():
    problems = protocol_layout_problems(PKG / "protocols", ROOT / "conf" / "protocol")
    assert not problems, "\n".join(problems)


def _tree(base: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_text(text, encoding="utf-8")


def test_the_layout_checks_fail_on_each_violation(tmp_path):
    """Each rule above, broken once in a small tree, is reported (the checks can fail)."""
    mem, mconf = tmp_path / "memory", tmp_path / "conf_memory"
    _tree(
        mem,
        {
            "__init__.py": "",
            "_base.py": "",
            "_abilities.py": "",
            "a/__init__.py": "",
            "blocks/__init__.py": "",
        },
    )
    _tree(
        mconf,
        {
            "a.yaml": "_target_: recallbench.memory.a.A\n",
            "a_small.yaml": "defaults: [a, _self_]\nk: 1\n",
            "_part.yaml": "k: 2\n",
        },
    )
    assert memory_layout_problems(mem, mconf) == []
    _tree(mem, {"_update.py": "", "b/__init__.py": "", "c/x.py": ""})
    _tree(
        mconf,
        {
            "c.yaml": "_target_: recallbench.memory.c.C\n",
            "d.yaml": "_target_: recallbench.memory.blocks.D\n",
            "e.yaml": "_target_: recallbench.memory.a.A\n",
        },
    )
    problems = "\n".join(memory_layout_problems(mem, mconf))
    assert "root holds ['_update.py']" in problems  # a loose module at the root
    assert "memory/b/ is not a method" in problems  # a package without its config
    assert "memory/c/ has no __init__.py" in problems
    assert "d.yaml: _target_ must name a class of a method package" in problems  # into blocks
    assert "e.yaml" not in problems  # a variant may have its own stem when it targets a method

    pro, pconf = tmp_path / "protocols", tmp_path / "conf_protocol"
    _tree(pro, {"__init__.py": "", "base.py": "", "evidence.py": "", "qa/__init__.py": ""})
    _tree(pconf, {"qa_lufy.yaml": "_target_: recallbench.protocols.qa.QA\n"})
    assert protocol_layout_problems(pro, pconf) == []
    _tree(pro, {"qa_scores.py": "", "lamp/__init__.py": ""})
    _tree(
        pconf,
        {
            "chat.yaml": "_target_: recallbench.protocols.qa.QA\n",
            "flat.yaml": "_target_: recallbench.protocols.flat.Flat\n",
        },
    )
    problems = "\n".join(protocol_layout_problems(pro, pconf))
    assert "root holds ['qa_scores.py']" in problems
    assert "protocols/lamp/ is the _target_ of no conf/protocol config" in problems
    assert "chat.yaml targets protocols/qa/" in problems  # stem neither qa nor qa_<variant>
    assert "flat.yaml: _target_ must name a class of a protocol package" in problems


def run_test_problems(run: Path, tests: Path) -> list[str]:
    """tests/ mirrors src/: each module of the run layer has its tests in
    ``tests/run/test_<module>.py``, not in the tests of a layer that happens to call it."""
    return [
        f"run/{module.name} has no tests/run/test_{module.stem}.py (move its tests there)"
        for module in sorted(run.glob("*.py"))
        if module.name != "__init__.py" and not (tests / f"test_{module.stem}.py").is_file()
    ]


def test_tests_of_the_run_layer_mirror_its_modules():
    problems = run_test_problems(PKG / "run", ROOT / "tests" / "run")
    assert not problems, "\n".join(problems)


def test_the_run_mirror_check_fails_on_a_module_without_its_tests(tmp_path):
    run, tests = tmp_path / "run", tmp_path / "tests_run"
    _tree(run, {"__init__.py": "", "runner.py": "", "resume.py": ""})
    _tree(tests, {"test_runner.py": "", "test_something_else.py": ""})
    assert run_test_problems(run, tests) == [
        "run/resume.py has no tests/run/test_resume.py (move its tests there)"
    ]
