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


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """Run every test with one torch thread, restored afterwards.

    Test forward passes are tiny; on a busy 2-core machine a second OpenMP thread spins instead
    of working (measured: embed+metrics tests took 80 s with 2 threads, 27 s with 1, same load).
    """
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
