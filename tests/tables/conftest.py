"""Fake run folders for table tests: run.json, config.yaml (choices + config), summary.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml


def write_run(
    results: Path,
    tag: str,
    job: str,
    choices: dict,
    metrics: dict,
    *,
    stamp: str = "20260101-000000",
    config: dict | None = None,
) -> Path:
    """Write a finished run folder ``results/runs/<tag>/<stamp>/<job>`` with ``metrics``."""
    run = results / "runs" / tag / stamp / job
    run.mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"status": "finished", "n_episodes": 2}))
    cfg = {"choices": choices, "generator": {"backend": "extractive", "model": "extractive"}}
    (run / "config.yaml").write_text(yaml.safe_dump({**cfg, **(config or {})}))
    (run / "summary.json").write_text(json.dumps({"metrics": metrics}))
    return run


@pytest.fixture
def make_run():
    return write_run
