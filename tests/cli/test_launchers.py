"""Hydra launchers: a joblib sweep runs jobs in parallel processes into ONE sweep folder; the
SLURM preset composes (issue 10, item 4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hydra import compose, initialize_config_dir

from recallbench import CONF_DIR

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"
BASE = ["dataset=msc", "memory=memory_retrieval", "generator=extractive", "progress=false"]


def _cli(args: list[str], results: Path, stamp: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "RECALLBENCH_DATA_DIR": str(FIXTURES), "RECALLBENCH_STAMP": stamp}
    env.pop("HYDRA_FULL_ERROR", None)
    cmd = [sys.executable, "-m", "recallbench.cli", *args, f"paths.results_dir={results}"]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)


def _values(run_dir: Path) -> dict[str, float]:
    metrics = json.loads((run_dir / "summary.json").read_text())["metrics"]
    return {k: v["value"] for k, v in metrics.items()}


def test_joblib_sweep_runs_two_jobs_in_processes_into_one_sweep_folder(tmp_path):
    sweep = _cli(["-m", *BASE, "memory.k=1,6", "hydra/launcher=local_parallel"], tmp_path, "s")
    assert sweep.returncode == 0, sweep.stderr
    assert "Joblib.Parallel" in sweep.stdout + sweep.stderr  # the joblib launcher ran them
    folders = sorted(p for p in (tmp_path / "runs" / "adhoc" / "s").iterdir() if p.is_dir())
    state = json.loads((tmp_path / "runs" / "adhoc" / "s" / "sweep.json").read_text())
    assert {j: e["status"] for j, e in state["jobs"].items()} == {
        f.name: "finished" for f in folders
    }
    assert [f.name for f in folders] == [
        "msc-memory_retrieval-extractive-memory.k_1",
        "msc-memory_retrieval-extractive-memory.k_6",
    ]
    pids = {json.loads((f / "run.json").read_text())["pid"] for f in folders}
    assert len(pids) == 2  # two worker processes
    for folder, k in zip(folders, (1, 6), strict=True):
        alone = _cli([*BASE, f"memory.k={k}", "job=alone"], tmp_path / f"k{k}", "a")
        assert alone.returncode == 0, alone.stderr
        assert _values(folder) == _values(tmp_path / f"k{k}" / "runs" / "adhoc" / "a" / "alone")
    assert _values(folders[0]) != _values(folders[1])


def test_slurm_preset_composes_with_the_submitit_launcher():
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        cfg = compose(
            "config",
            overrides=["hydra/launcher=slurm", "hydra.launcher.partition=gpu"],
            return_hydra_config=True,
        )
    launcher = cfg.hydra.launcher
    assert launcher._target_.endswith("submitit_launcher.SlurmLauncher")
    assert launcher.partition == "gpu"
    assert launcher.timeout_min == 240 and launcher.array_parallelism == 16
    assert launcher.submitit_folder.endswith("hydra/submitit/%j")
