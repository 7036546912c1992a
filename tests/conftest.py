"""Shared fixtures: the project's own fixtures folder and the real data dir when present."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "data" / "fixtures"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("WANDB_MODE", "disabled")


def _real_data_dir() -> Path | None:
    env = os.environ.get("RECALLBENCH_DATA_DIR")
    for candidate in (env, ROOT.parent / "shared" / "data", ROOT.parents[1] / "shared" / "data"):
        if candidate and Path(candidate).is_dir() and (Path(candidate) / "README.md").exists():
            return Path(candidate)
    return None


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """Root of the self-written fixtures, laid out like a data dir."""
    return FIXTURES


@pytest.fixture(scope="session")
def real_data_dir() -> Path:
    """The real data root (../shared/data or $RECALLBENCH_DATA_DIR); skips when absent."""
    found = _real_data_dir()
    if found is None:
        pytest.skip(
            "real data not found: set RECALLBENCH_DATA_DIR or put shared/data beside the repo"
        )
    return found
