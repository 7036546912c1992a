"""In a clone, a finished run is reused across commits that leave the code it ran as it was.

Issue 48: a run is keyed on the sha256 of the project modules its process imported and the
files it read (``run.sources``), not on the commit. Each step is a real ``recallbench`` process
in a git repository the test makes from this checkout's ``src/`` and ``conf/``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from recallbench.io import not_reads

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "data" / "fixtures"
JOB = "msc-memory_retrieval-extractive"
ARGS = (
    "progress=false",
    "generator=extractive",
    "episodes=1",
    "embedder=hashing",
    "metrics=lexical",
    "memory=memory_retrieval",
    "hydra/job_logging=none",
    "hydra/hydra_logging=none",
)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


class Clone:
    """A git repository holding the project's code, and the results of its runs."""

    def __init__(self, tmp: Path) -> None:
        self.repo, self.results, self.data = tmp / "repo", tmp / "results", tmp / "data"
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        with not_reads():  # copying is no input of this process's runs (test_sources.py)
            shutil.copytree(ROOT / "src", self.repo / "src", symlinks=True, ignore=ignore)
            shutil.copytree(ROOT / "conf", self.repo / "conf", ignore=ignore)
            shutil.copytree(FIXTURES, self.data)
        (self.repo / "docs").mkdir()
        (self.repo / "docs" / "running.md").write_text("# Running\n")
        (self.repo / ".gitignore").write_text("__pycache__/\n*.pyc\n")
        self.git("init", "-q")
        self.commit("the release")

    def git(self, *args: str) -> str:
        ident = ["-c", "user.name=t", "-c", "user.email=t@example.org"]
        done = subprocess.run(
            ["git", *ident, *args], cwd=self.repo, capture_output=True, text=True, check=True
        )
        return done.stdout

    def commit(self, message: str) -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)

    def edit(self, rel: str, line: str = "# an edit\n") -> None:
        path = self.repo / rel
        path.write_text(path.read_text() + line)

    def run(self, stamp: str, rerun: bool = False, replay: bool = False) -> str:
        """Run the job; return its stderr. ``replay``: keep the command records, so a
        repeated command may be answered without composing (else only the run rule decides)."""
        if not replay:
            shutil.rmtree(self.results / "cache" / "commands", ignore_errors=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("RECALLBENCH_")}
        env.update(
            PYTHONPATH=str(self.repo / "src"),
            RECALLBENCH_DATA_DIR=str(self.data),
            RECALLBENCH_STAMP=stamp,
            RECALLBENCH_RERUN="1" if rerun else "0",
            WANDB_MODE="disabled",
        )
        argv = [sys.executable, "-m", "recallbench.cli", f"paths.results_dir={self.results}"]
        done = subprocess.run(
            [*argv, *ARGS], cwd=self.repo, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr
        return done.stderr

    def ran(self, stamp: str) -> bool:
        return (self.results / "runs" / "adhoc" / stamp / JOB / "run.json").is_file()


def test_a_run_is_reused_until_the_code_it_ran_changes(tmp_path):
    clone = Clone(tmp_path)
    clone.run("s1")
    assert clone.ran("s1")
    info = json.loads((clone.results / f"runs/adhoc/s1/{JOB}/run.json").read_text())
    modules, reads = info["sources"]["modules"], info["sources"]["reads"]
    assert "src/recallbench/memory/memory_retrieval/_memory_retrieval.py" in modules
    assert not any("memory/lufy/" in m for m in [*modules, *reads])  # never imported
    assert "conf/memory/memory_retrieval.yaml" in reads and "conf/memory/lufy.yaml" not in reads
    assert any(r.endswith("msc_dialogue/session_2/test.txt") for r in reads)  # a data file
    assert info["git_sha"] == clone.git("rev-parse", "HEAD").strip()  # kept for the record

    clone.edit("docs/running.md", "A docs change.\n")
    clone.commit("docs")
    assert "reusing" in clone.run("s2", replay=True) and not clone.ran("s2")
    assert "reusing" in clone.run("s3") and not clone.ran("s3")  # by the run rule too

    clone.edit("src/recallbench/memory/lufy/_lufy.py")  # another method's package
    clone.edit("conf/memory/naive_rag.yaml")  # a conf file the run did not read
    clone.commit("another method")
    assert "reusing" in clone.run("s4", replay=True) and not clone.ran("s4")

    clone.edit("src/recallbench/memory/memory_retrieval/_memory_retrieval.py")  # uncommitted
    assert "reusing" not in clone.run("s5", replay=True) and clone.ran("s5")
    assert "reusing" in clone.run("s6") and not clone.ran("s6")  # that code, now recorded
    clone.commit("the edit")  # committing it changes no file it ran: still reused
    assert "reusing" in clone.run("s7") and not clone.ran("s7")

    clone.edit("conf/memory/memory_retrieval.yaml")  # read, though the config is the same
    assert "reusing" not in clone.run("s8", replay=True) and clone.ran("s8")

    assert "reusing" not in clone.run("s9", rerun=True) and clone.ran("s9")  # RERUN=1


def test_a_run_recorded_before_sources_is_reused_by_its_commit(tmp_path):
    clone = Clone(tmp_path)
    clone.run("s1")
    path = clone.results / f"runs/adhoc/s1/{JOB}/run.json"
    info = json.loads(path.read_text())
    path.write_text(json.dumps({k: v for k, v in info.items() if k != "sources"}))
    assert "reusing" in clone.run("s2") and not clone.ran("s2")  # the same clean commit
    clone.edit("docs/running.md", "A docs change.\n")
    clone.commit("docs")
    assert "reusing" not in clone.run("s3") and clone.ran("s3")  # another commit: runs
    assert "sources" in json.loads((clone.results / f"runs/adhoc/s3/{JOB}/run.json").read_text())
