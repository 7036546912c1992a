"""Real run folders for the report: two memory methods on the MSC fixtures, one sweep stamp,
made by the cli's own run function with the extractive generator and the hashing embedder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from recallbench.cli import CONF_DIR, run

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"
STAMP = "20260101-000000"


@pytest.fixture(scope="session")
def view_runs(tmp_path_factory) -> dict[str, Path]:
    """``{memory: run folder}`` for full_history and memory_retrieval under tag ``day``."""
    tmp = tmp_path_factory.mktemp("results")
    mp = pytest.MonkeyPatch()
    mp.setenv("RECALLBENCH_STAMP", STAMP)
    out = {}
    try:
        for memory in ("full_history", "memory_retrieval"):
            overrides = [
                f"paths.results_dir={tmp}",
                "dataset=msc",
                f"dataset.data_dir={FIXTURES}",
                f"memory={memory}",
                "embedder=hashing",
                "generator=extractive",
                "metrics=lexical",
                "progress=false",
                "wandb.mode=disabled",
                "tag=day",
            ]
            with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
                cfg = compose("config", overrides=overrides)
            choices = {"memory": memory, "dataset": "msc", "generator": "extractive"}
            out[memory] = run(cfg, f"msc-{memory}", choices, overrides)
    finally:
        mp.undo()
    return out


@pytest.fixture
def run_copy(view_runs, tmp_path):
    """A writable copy of a run folder (tests that inject failures or drop files)."""

    def copy(memory: str) -> Path:
        src = view_runs[memory]
        dst = tmp_path / "runs" / "day" / STAMP / src.name
        shutil.copytree(src, dst)
        return dst

    return copy
