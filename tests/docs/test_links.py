"""Every link and every repository path that README.md and docs/*.md name resolves.

- a markdown link ``[text](target)`` that is not a web address names a file relative to the page
  (and, after ``#``, a heading of that page: GitHub's anchor of it);
- a path in a code span (``src/...``, ``conf/...``, ``docs/...``, ``tests/...``, ``bench/...``,
  ``scripts/...``, ``notebooks/...``, ``data/fixtures/...``, ``results/tables/...``, or any
  ``a/b.py``-like path) names a file or folder of the repository, from its root, from ``src/`` or
  from ``src/recallbench/`` (``recallbench/metrics/attribution.py``, ``cli/reuse.py``). A span with
  a placeholder (``<paper>``, ``*``, ``{..}``, ``$VAR``, ``...``) names a family, not a path, and
  is skipped, as are run-time outputs (``results/runs/...``, ``results/cache/...``). A page names
  a file it proposes (one an example would add) in ``<!-- not in the repository: a/b.py ... -->``:
  those must not exist (a stale note fails) and are not looked for.

The package's own texts (each docstring under ``src/recallbench/`` and each README there,
the papers' included) name no module that does not exist: a dotted name ``recallbench.x.y``, a
name cited in parentheses ``(run.resume.reusable_run)`` (as conf/ notes cite code,
tests/cli/test_conf_code_names.py), or a path ``metrics/foo.py`` (``src/recallbench/...``) names
a module, or a name a module defines. A move that leaves its old name behind fails here, as
does a module's flat name from before it moved into a package (``lufy_store`` for
``memory/lufy/_store.py``, ``qa_scores`` for ``protocols/qa/scores.py``: issue 36).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
SPAN = re.compile(r"`([^`\n]+)`")
ROOTS = ("src/", "conf/", "docs/", "tests/", "bench/", "scripts/", "notebooks/", "data/fixtures/")
ROOTS += ("results/tables/", ".ci/")
SUFFIX = re.compile(r"\.(py|md|ya?ml|json|jsonl|ipynb|csv|toml|txt|sh)$")
PLACEHOLDER = re.compile(r"[<>*{}$|]|\.\.\.")
PACKAGE = ROOT / "src" / "recallbench"
UNITS = "|".join(sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()))
MODULE_PATH = re.compile(rf"(?<![\w/.-])(?:src/)?(?:recallbench/)?((?:{UNITS})/[\w/]+\.py)\b")
FULL_NAME = re.compile(r"(?<![\w./])recallbench((?:\.\w+)+)")
CITED_NAME = re.compile(rf"\(((?:{UNITS})(?:\.\w+)+)[),;: ]")
FILE_NAME = re.compile(r"\.(py|md|ya?ml|json|jsonl|csv|sqlite|txt|html)$")  # (run.json, ...)
FLAT_NAME = re.compile(r"(_?[a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?:\.\w+)*(?:\(\))?")


def anchors(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings (lower case, punctuation dropped, spaces -> -)."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    heads = re.findall(r"^#+\s+(.*)$", text, re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}


def links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t)]


def proposed(page: Path) -> set[str]:
    """The paths a page names before they exist (its ``not in the repository`` notes)."""
    notes = re.findall(r"<!-- not in the repository[^:]*:(.*?)-->", page.read_text("utf-8"), re.S)
    return {word for note in notes for word in note.split()}


def paths(page: Path) -> list[str]:
    """The repository paths named in the page's code spans and code blocks."""
    found = []
    for span in SPAN.findall(page.read_text(encoding="utf-8")):
        for word in span.split():
            word = word.strip("(),;:'\"").split("=", 1)[-1]
            if word.startswith(("../", "/", "~")) or PLACEHOLDER.search(word) or "/" not in word:
                continue
            if word.startswith("results/") and not word.startswith("results/tables/"):
                continue  # a run-time output
            if word.startswith(ROOTS) or SUFFIX.search(word):
                found.append(word)
    return found


def _exists(path: str) -> bool:
    return any(
        (base / path).exists() for base in (ROOT, ROOT / "src", ROOT / "src" / "recallbench")
    )


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_link_resolves(page):
    bad = []
    for target in links(page):
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        if not dest.exists():
            bad.append(f"{target}: no {dest.relative_to(ROOT) if ROOT in dest.parents else dest}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(f"{target}: no heading #{anchor} in {dest.name}")
    assert not bad, f"{page.relative_to(ROOT)}: " + "; ".join(bad)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_repository_path_resolves(page):
    named = proposed(page)
    bad = sorted({p for p in paths(page) if p not in named and not _exists(p)})
    assert not bad, f"{page.relative_to(ROOT)} names paths the repository lacks: {bad}"
    stale = sorted(p for p in named if _exists(p))
    assert not stale, f"{page.relative_to(ROOT)}: 'not in the repository' yet present: {stale}"


def test_the_checks_find_what_they_look_for(tmp_path):
    """The link and path finders see a broken link, a missing heading and a missing path."""
    page = tmp_path / "page.md"
    page.write_text(
        "# A page\n\n[ok](page.md#a-page) [gone](nowhere.md) [bad](page.md#nope) "
        "[web](https://example.org)\n`src/recallbench/cli/reproduce.py` `src/nope.py` "
        "`src/recallbench/papers/<paper>/README.md` `recallbench/metrics/attribution.py`\n",
        encoding="utf-8",
    )
    assert links(page) == ["page.md#a-page", "nowhere.md", "page.md#nope"]
    assert anchors(page) == {"a-page"}
    found = paths(page)
    assert found == ["src/recallbench/cli/reproduce.py", "src/nope.py",
                     "recallbench/metrics/attribution.py"]  # fmt: skip
    assert [p for p in found if not _exists(p)] == ["src/nope.py"]


def test_readme_is_short_and_gives_the_test_command_ci_runs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 120
    assert "make test" in readme and "make reproduce-table-lufy-11" in readme
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_no_docstring_cites_a_file_outside_the_repository():
    """The first design notes (DESIGN.md) and notes/ live outside the repository: code cites
    docs/ instead."""
    cites = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sorted((ROOT / "src").rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"DESIGN\.md|notes/API", line)
    ]
    assert not cites, cites


def package_texts() -> list[tuple[str, str]]:
    """``(where, text)`` of each docstring under src/recallbench and each README there."""
    texts = []
    documented = ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, documented) and (doc := ast.get_docstring(node, clean=False)):
                texts.append((str(path.relative_to(ROOT)), doc))
    readmes = sorted(PACKAGE.rglob("README.md"))
    return texts + [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in readmes]


def _module(parts: list[str]) -> Path | None:
    """The file of the module ``recallbench.<parts>`` (a package's ``__init__.py``), if any."""
    path = PACKAGE.joinpath(*parts)
    for file in (path / "__init__.py", path.with_suffix(".py")):
        if file.is_file():
            return file
    return None


def _defines(module: Path, name: str) -> bool:
    """Whether a module's top level (its ``if``/``try`` blocks included) binds ``name``."""
    body = list(ast.parse(module.read_text(encoding="utf-8")).body)
    while body:
        node = body.pop()
        if isinstance(node, ast.If | ast.Try):
            body += [*node.body, *node.orelse, *getattr(node, "finalbody", [])]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name == name:
                return True
        elif isinstance(node, ast.Import | ast.ImportFrom):
            if any((a.asname or a.name).split(".")[0] == name for a in node.names):
                return True
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t)):
                return True
    return False


def names_a_module(dotted: str) -> bool:
    """Whether ``recallbench.<dotted>`` is a module, or a name its longest module defines."""
    parts = dotted.split(".")
    cut = next(k for k in range(len(parts), -1, -1) if _module(parts[:k]) is not None)
    if cut == len(parts):
        return True
    module = _module(parts[:cut])
    return module is not None and _defines(module, parts[cut])


def _folders() -> dict[str, list[Path]]:
    """Each package's name -> its folders (``lufy``: memory/lufy and papers/lufy)."""
    found: dict[str, list[Path]] = {}
    for init in sorted(PACKAGE.rglob("__init__.py")):
        found.setdefault(init.parent.name, []).append(init.parent)
    return found


FOLDERS = _folders()
MODULES = {p.stem for p in PACKAGE.rglob("*.py")} | set(FOLDERS)
# Words of that shape that name something else, not a module: what each one is.
NOT_MODULES = {
    "llm_calls": "a compute activity of recallbench.meter",
    "carecall_human": "a human-eval study (papers/carecall/human.py)",
}


def _defined() -> set[str]:
    """Every function and class the package defines at module level (``read_summary`` is a
    function of ``metrics.summary``, not the flat name of ``run/read/_summary.py``)."""
    out = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                out.add(node.name)
    return out


DEFINED = _defined()


def moved(name: str) -> bool:
    """Whether ``name`` is the flat name of a module now inside a package: ``<package>_<module>``
    where the package holds ``<module>.py`` or ``_<module>.py`` and no module, function or class
    is called ``name``."""
    if name in MODULES or name in NOT_MODULES or name in DEFINED:
        return False
    words = name.lstrip("_").split("_")
    for cut in range(1, len(words)):
        package, module = "_".join(words[:cut]), "_".join(words[cut:])
        for folder in FOLDERS.get(package, []):
            if (folder / f"{module}.py").is_file() or (folder / f"_{module}.py").is_file():
                return True
    return False


def stale_names(text: str) -> list[str]:
    """The module names and paths ``text`` cites that name no module of the package."""
    paths = [p for p in MODULE_PATH.findall(text) if not (PACKAGE / p).is_file()]
    dotted = [d.strip(".") for d in FULL_NAME.findall(text)] + CITED_NAME.findall(text)
    named = [d for d in dotted if d and not FILE_NAME.search(d)]
    spans = [m[1] for span in SPAN.findall(text) if (m := FLAT_NAME.fullmatch(span))]
    return (
        paths
        + [f"recallbench.{d}" for d in named if not names_a_module(d)]
        + [flat for flat in spans if moved(flat)]
    )


def test_the_package_names_no_module_that_does_not_exist():
    texts = package_texts()
    assert len(texts) > 2000 and any(w.endswith("papers/lufy/README.md") for w, _ in texts)
    stale = [f"{where}: {name}" for where, text in texts for name in stale_names(text)]
    assert not stale, "names of modules that do not exist:\n" + "\n".join(stale)


def test_the_name_finder_sees_old_names():
    """A dotted name, a cited name and a path each resolve or not, as the package stands."""
    text = (
        "``recallbench.run.resume.reusable_run`` ``recallbench.run.runner`` (run.resume.rerun_asked)"
        " ``metrics/activity.py`` ``src/recallbench/cli/reuse.py`` (run.json, status)\n"
        "``recallbench.lufy_fit`` (protocols.timerag_scores) ``memory/lufy.py``"
        " ``recallbench.run.resume.no_such_name`` Mem0's ``evaluation/metrics/utils.py``\n"
        "``lufy_store`` ``qa_scores.score_qa`` ``_teafarm_offline`` ``memory_retrieval``"
        " ``qa_gvd`` ``lufy_table11`` ``dont_know_rate`` ``_english_ops`` ``read_summary``"
    )
    assert stale_names(text) == [
        "memory/lufy.py",  # now a package: memory/lufy/
        "recallbench.lufy_fit",
        "recallbench.run.resume.no_such_name",
        "recallbench.protocols.timerag_scores",
        "lufy_store",  # memory/lufy/_store.py
        "qa_scores",  # protocols/qa/scores.py
        "_teafarm_offline",  # protocols/teafarm/_offline.py
    ]
