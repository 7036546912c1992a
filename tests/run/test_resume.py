"""A run folder belongs to one config; a sweep's jobs get their own folders (issue 10).

The bug this pins: ``RECALLBENCH_STAMP=x recallbench -m memory=memory_retrieval memory.k=2,6``
wrote both jobs into one folder and the k=6 job "resumed" the k=2 job's items, reporting the
k=2 result under a k=6 config.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"
BASE = ("dataset=msc", "memory=memory_retrieval", "generator=extractive")


def _summary(run_dir: Path) -> dict[str, float]:
    metrics = json.loads((run_dir / "summary.json").read_text())["metrics"]
    return {name: entry["value"] for name, entry in metrics.items()}


def test_sweep_jobs_get_distinct_folders_with_correct_summaries(run_cli, monkeypatch, tmp_path):
    monkeypatch.setenv("RECALLBENCH_DATA_DIR", str(FIXTURES))
    monkeypatch.setenv("RECALLBENCH_STAMP", "x")
    outcome = run_cli("-m", *BASE, "memory.k=1,6", results=tmp_path / "sweep")
    assert outcome.status == 0, outcome.err
    folders = sorted(p for p in (tmp_path / "sweep/runs/adhoc/x").iterdir() if p.is_dir())
    assert [f.name for f in folders] == [
        "msc-memory_retrieval-extractive-memory.k_1",
        "msc-memory_retrieval-extractive-memory.k_6",
    ]
    for folder, k in zip(folders, (1, 6), strict=True):
        config = yaml.safe_load((folder / "config.yaml").read_text())
        assert config["memory"]["k"] == k
        assert f"memory.k={k}" in json.loads((folder / "run.json").read_text())["overrides"]
    # each sweep job's summary is what a lone run of its config gives
    monkeypatch.setenv("RECALLBENCH_STAMP", "alone")
    for folder, k in zip(folders, (1, 6), strict=True):
        assert run_cli(*BASE, f"memory.k={k}", f"job=k{k}", results=tmp_path / "alone").status == 0
        alone = tmp_path / "alone" / "runs" / "adhoc" / "alone" / f"k{k}"
        assert _summary(folder) == _summary(alone)
    assert _summary(folders[0]) != _summary(folders[1])


def test_a_folder_of_another_config_is_refused(run_cli, monkeypatch, tmp_path):
    monkeypatch.setenv("RECALLBENCH_DATA_DIR", str(FIXTURES))
    monkeypatch.setenv("RECALLBENCH_STAMP", "s")
    assert run_cli(*BASE, "memory.k=1", "job=j", "episodes=1").status == 0
    run_dir = tmp_path / "results" / "runs" / "adhoc" / "s" / "j"
    before = (run_dir / "run.json").read_text()
    # same stamp and job, another config, no resume_dir: refused, nothing overwritten
    clash = run_cli(*BASE, "memory.k=6", "job=j", "episodes=1")
    assert clash.status == 2
    (line,) = clash.error_lines
    assert "holds a run of another config" in line and "memory.k: 1 -> 6" in line
    # an explicit resume of another config: refused the same way
    resumed = run_cli(*BASE, "memory.k=6", "episodes=1", f"resume_dir={run_dir}")
    assert resumed.status == 2 and "memory.k: 1 -> 6" in resumed.error_lines[0]
    # other episodes: refused (another dataset selection)
    other = run_cli(*BASE, "memory.k=1", "episodes=2", f"resume_dir={run_dir}")
    assert other.status == 2 and "episodes: 1 -> 2" in other.error_lines[0]
    assert (run_dir / "run.json").read_text() == before
    # the same config is accepted (progress is not identity); the run already finished, so it
    # says so and does nothing: no second attempt, nothing re-scored
    again = run_cli(*BASE, "memory.k=1", "episodes=1", "progress=true", f"resume_dir={run_dir}")
    assert again.status == 0, again.err
    assert "already finished: nothing to run or score" in again.err
    assert (run_dir / "run.json").read_text() == before
