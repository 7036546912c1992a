"""The code a run records (``run.provenance``): the working tree's state, issue 22 item 5.

``git_state`` flags changes to the code paths only (src/, conf/), hashes the content of the
change, and a run on a tree with uncommitted changes says so in one warning line and in run.json.
(Moved from tests/cli/test_second_round.py with the rest of the run layer's tests.)
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from recallbench.run.provenance import git_state

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"
MSC = ("dataset=msc", "memory=no_memory", "generator=extractive", "episodes=1")


def _job(run_dir: Path) -> dict:
    return json.loads((run_dir / "run.json").read_text())


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path) -> Path:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "conf").mkdir()
    (repo / "src" / "m.py").write_text("x = 1\n")
    (repo / "conf" / "c.yaml").write_text("k: 1\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init")
    return repo


@pytest.mark.parametrize(
    "change,dirty",
    [
        (lambda r: None, False),
        (lambda r: (r / "conf" / "c.yaml").write_text("k: 2\n"), True),  # an edited config
        (lambda r: (r / "src" / "mine.py").write_text("y = 2\n"), True),  # an untracked method
        (lambda r: (r / "notes.txt").write_text("n\n"), False),  # outside the code paths
        (lambda r: (r / "results").mkdir() or (r / "results" / "t.md").write_text("t"), False),
    ],
    ids=["clean", "edited-config", "untracked-src", "untracked-elsewhere", "results"],
)
def test_git_state_flags_code_changes_only(repo, change, dirty):
    head = git_state(repo)["git_sha"]
    change(repo)
    state = git_state(repo)
    assert state["git_sha"] == head and state["git_dirty"] is dirty
    assert (state["git_diff_sha256"] is not None) is dirty


def test_diff_hash_follows_the_content_of_the_change(repo):
    (repo / "src" / "mine.py").write_text("y = 2\n")
    first = git_state(repo)["git_diff_sha256"]
    assert git_state(repo)["git_diff_sha256"] == first  # same tree, same hash
    (repo / "src" / "mine.py").write_text("y = 3\n")
    assert git_state(repo)["git_diff_sha256"] != first


def test_a_run_on_a_dirty_tree_says_so(run_cli, monkeypatch, tmp_path, repo):
    """The project's tree is whatever it is; a copy of the package in a dirty repo is not."""
    import recallbench.run.provenance as provenance

    monkeypatch.setenv("RECALLBENCH_DATA_DIR", str(FIXTURES))
    (repo / "src" / "mine.py").write_text("y = 2\n")
    real = provenance.git_state
    monkeypatch.setattr("recallbench.run.runner.git_state", lambda: real(repo))
    outcome = run_cli(*MSC, "job=j", "tag=t")
    assert outcome.status == 0, outcome.err
    (line,) = [ln for ln in outcome.error_lines if "warning" in ln]
    assert "uncommitted changes (diff sha256" in line and "not reproducible" in line
    run_dir = next((tmp_path / "results" / "runs" / "t").glob("*/j"))
    info = _job(run_dir)
    assert info["git_dirty"] is True and len(info["git_diff_sha256"]) == 64
    assert "code " in outcome.err and info["git_diff_sha256"][:12] in outcome.err
    shutil.rmtree(repo)


def test_same_versions_sets_aside_recallbench_own_number_only():
    from recallbench.run.provenance import same_versions

    now = {"python": "3.11.7", "recallbench": "0.2.0", "torch": "2.13.0+cpu"}
    assert same_versions({**now, "recallbench": "0.1.0"}, now)
    assert not same_versions({**now, "torch": "2.12.0"}, now)
    assert not same_versions({k: v for k, v in now.items() if k != "torch"}, now)
    assert not same_versions(None, now) and not same_versions(["torch"], now)


def test_an_optional_library_is_recorded_when_imported_and_compared_when_recorded(monkeypatch):
    import sys
    from importlib import metadata

    from recallbench.run import provenance
    from recallbench.run.provenance import package_versions, same_versions

    monkeypatch.delitem(sys.modules, "kuzu", raising=False)
    base = package_versions()
    assert "kuzu" not in base  # a run that never imported it records nothing of it
    monkeypatch.setitem(sys.modules, "kuzu", object())
    installed = metadata.version("kuzu")
    assert package_versions()["kuzu"] == installed
    # a graphiti run's record is reused by a process that has not imported kuzu yet ...
    assert same_versions({**base, "kuzu": installed}, base)
    # ... not once another kuzu is installed, and a run without it is unaffected
    assert not same_versions({**base, "kuzu": "0.0.1"}, base)
    monkeypatch.setattr(provenance, "_installed", lambda name: "9.9.9")
    assert not same_versions({**base, "kuzu": installed}, base)
    assert same_versions(base, base)
