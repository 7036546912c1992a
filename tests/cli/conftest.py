"""Run the ``recallbench`` console entry point in-process and capture what a user would see."""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from recallbench import cli

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"
# In-process, Hydra must leave logging alone: its dictConfig would close handlers that other
# test modules' imports (absl via rouge-score) bound to pytest's captured stderr.
PER_PROCESS_ENV = ("RECALLBENCH_STAMP", "RECALLBENCH_VERBOSE")
LOGGING = ("hydra/job_logging=none", "hydra/hydra_logging=none")


@dataclass
class Outcome:
    status: int | str | None
    err: str
    out: str

    @property
    def error_lines(self) -> list[str]:
        """stderr lines the CLI itself printed (library INFO logs and progress bars dropped)."""
        return [line for line in self.err.splitlines() if line.startswith("recallbench")]


@pytest.fixture
def data_copy(tmp_path) -> Path:
    """A private copy of the fixture data root, safe to damage."""
    dest = tmp_path / "data"
    shutil.copytree(FIXTURES, dest)
    return dest


@pytest.fixture
def run_cli(monkeypatch, capsys, tmp_path):
    """Call ``recallbench <argv>`` in this process; return its exit status and output."""
    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)
    monkeypatch.delenv("RECALLBENCH_VERBOSE", raising=False)

    def call(*argv: str, results: Path | None = None) -> Outcome:
        results = results or tmp_path / "results"
        flags = [a for a in argv if a.startswith("-")]  # Hydra wants -m before the overrides
        rest = [a for a in argv if not a.startswith("-")]
        args = ["recallbench", *flags, f"paths.results_dir={results}", "progress=false"]
        args += [*LOGGING, *rest]
        monkeypatch.setattr(sys, "argv", args)
        capsys.readouterr()
        status = 0
        # one call = one process: what main() puts in the environment ends with the call
        saved = {k: os.environ.get(k) for k in PER_PROCESS_ENV}
        try:
            cli.main()
        except SystemExit as exc:
            status = exc.code
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        captured = capsys.readouterr()
        return Outcome(status, captured.err, captured.out)

    return call
