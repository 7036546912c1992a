"""Provenance in run.json: the code, the packages and the data a run saw.

``git_state`` says which commit the code comes from and whether the working tree differed from
it (a run of uncommitted code is not reproducible from its commit alone); ``package_versions``
names the libraries that shape results (``same_versions`` compares them without recallbench's
own version number: its code is keyed by the sha256 of what a run imported and read,
``run.sources``, so a release that bumps the number reuses the runs its changes cannot reach);
``episodes_sha256`` identifies the episodes a run saw
(table headers name data by it, never by a machine's path).
"""

from __future__ import annotations

import hashlib
import platform
import subprocess
import sys
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import TypedDict

from recallbench.records import Episode

PACKAGES = (
    "recallbench",
    "torch",
    "transformers",
    "openai",
    "sentence-transformers",
    "numpy",
    "mem0ai",
)
# Libraries that shape only the runs of the methods importing them (memory=graphiti, langmem):
# distribution -> module. A run records one when its process imported the module, so adding
# them left every other run's reuse key as it was; a run that recorded one is reused only while
# that version is installed (``same_versions``).
OPTIONAL_PACKAGES = {
    "graphiti-core": "graphiti_core",
    "kuzu": "kuzu",
    "langmem": "langmem",
    "langgraph": "langgraph",
}


# What a dirty flag covers: the code and configs that shape a run (results/, docs/ and tests/
# may change without moving a number, and regenerated tables would make every run dirty).
CODE_PATHS = ("src", "conf", "pyproject.toml", "Makefile", "scripts")


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes] | None:
    try:
        out = subprocess.run(["git", *args], capture_output=True, timeout=10, cwd=cwd)
    except (OSError, subprocess.SubprocessError):
        return None
    return out if out.returncode == 0 else None


class GitState(TypedDict):
    """The commit a run's code comes from (``git_state``); all None outside a checkout."""

    git_sha: str | None
    git_dirty: bool | None
    git_diff_sha256: str | None


def git_state(cwd: Path | None = None) -> GitState:
    """The commit a run's code comes from and whether the working tree differs from it.

    ``git_dirty`` is true when tracked files under ``CODE_PATHS`` differ from ``HEAD`` (staged
    or not) or untracked, unignored files lie there (a new method in ``src/``, a new config);
    ``git_diff_sha256`` hashes that difference (the binary diff, then each untracked file's path
    and bytes), so two runs of the same dirty tree share it. Outside a checkout all are None.
    """
    cwd = cwd or Path(__file__).resolve().parent
    head = _git(["rev-parse", "HEAD"], cwd)
    top = _git(["rev-parse", "--show-toplevel"], cwd)
    if head is None or top is None:
        return {"git_sha": None, "git_dirty": None, "git_diff_sha256": None}
    root = Path(top.stdout.decode().strip())
    diff = _git(["diff", "HEAD", "--binary", "--", *CODE_PATHS], root)
    others = _git(["ls-files", "--others", "--exclude-standard", "-z", "--", *CODE_PATHS], root)
    if diff is None or others is None:
        return {"git_sha": head.stdout.decode().strip(), "git_dirty": None, "git_diff_sha256": None}
    untracked = sorted(p for p in others.stdout.decode().split("\0") if p)
    digest = hashlib.sha256(diff.stdout)
    for rel in untracked:
        try:
            data = (root / rel).read_bytes()
        except OSError:  # a dangling link, a file gone since the listing
            data = b""
        digest.update(b"\0" + rel.encode() + b"\0" + data)
    dirty = bool(diff.stdout or untracked)
    return {
        "git_sha": head.stdout.decode().strip(),
        "git_dirty": dirty,
        "git_diff_sha256": digest.hexdigest() if dirty else None,
    }


def describe_code(info: Mapping[str, object]) -> str:
    """``abc123def456``, or with `` + uncommitted changes (diff sha256 0123456789ab)``."""
    sha = str(info.get("git_sha") or "unknown commit")[:12]
    if info.get("git_dirty"):
        return f"{sha} + uncommitted changes (diff sha256 {str(info['git_diff_sha256'])[:12]})"
    return sha


def describe_deviations(
    recorded: Mapping[str, object] | None, generator: Mapping[str, object]
) -> str:
    """`` (structured outputs: <mode>, repair turns: n; ...)`` when a run (the generator its
    ``run.json`` records, ``recorded``, else its generator config) constrained or re-asked its
    replies: deviations from the papers' free-text, single-call setting; else ""."""
    recorded = recorded or {}
    mode = recorded.get("structured") or generator.get("structured")
    repairs = recorded.get("repairs") or generator.get("repairs") or 0
    parts = [f"structured outputs: {mode}"] if mode not in (None, "off", False) else []
    parts += [f"repair turns: {repairs}"] if repairs else []
    if not parts:
        return ""
    return f" ({', '.join(parts)}; a deviation from the papers' free-text replies)"


OWN_PACKAGE = "recallbench"  # recorded in run.json, not compared (``same_versions``)


def _installed(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def package_versions() -> dict[str, str]:
    """Return installed versions of the packages that shape results: ``PACKAGES`` always, an
    ``OPTIONAL_PACKAGES`` one when this process imported its module."""
    found = {"python": platform.python_version()}
    imported = [d for d, module in OPTIONAL_PACKAGES.items() if module in sys.modules]
    for name in (*PACKAGES, *imported):
        if (version := _installed(name)) is not None:
            found[name] = version
    return found


def same_versions(recorded: object, now: Mapping[str, str] | None = None) -> bool:
    """Whether ``recorded`` (a ``package_versions()`` of an earlier process) names the versions
    installed now (``now``: ``package_versions()``), recallbench's own aside: its version number
    changes with every release, while its code is compared file by file (``run.sources``)."""
    if not isinstance(recorded, Mapping):
        return False
    current = package_versions() if now is None else now

    def compared(versions: Mapping[str, object]) -> dict[str, object]:
        skip = {OWN_PACKAGE, *OPTIONAL_PACKAGES}
        return {k: v for k, v in versions.items() if k not in skip}

    if compared(recorded) != compared(current):
        return False
    # an optional library the run imported: the version installed now (the current process
    # may not have imported it yet when it asks)
    return all(
        recorded[name] == (current.get(name) or _installed(name))
        for name in OPTIONAL_PACKAGES
        if name in recorded
    )


def episodes_sha256(episodes: Sequence[Episode]) -> str:
    """Return the sha256 of the loaded episodes' canonical JSON (what the run actually saw)."""
    h = hashlib.sha256()
    for ep in episodes:
        h.update(ep.to_json().encode())
        h.update(b"\n")
    return h.hexdigest()
