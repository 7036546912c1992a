"""Hand-written run folders: run.json, config.yaml (choices, overrides, values), summary.json,
usage.json, as the runner writes them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml


def write_run(
    results: Path,
    tag: str,
    stamp: str,
    job: str,
    *,
    overrides: tuple[str, ...] = (),
    config: dict | None = None,
    metrics: dict | None = None,
    status: str = "finished",
) -> Path:
    """Write ``results/runs/<tag>/<stamp>/<job>`` with a whole-run value per metric."""
    run = results / "runs" / tag / stamp / job
    run.mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"status": status, "n_episodes": 1}))
    cfg = {
        "choices": {"memory": "memory_retrieval", "dataset": "msc"},
        "memory": {"k": 6, "update": False},
        "episodes": None,
        "overrides": list(overrides),
        **(config or {}),
    }
    (run / "config.yaml").write_text(yaml.safe_dump(cfg))
    entries = {
        m: {"value": v, "n": 3, "per_session": {"3": {"value": v, "n": 3}}}
        for m, v in (metrics or {"f1": 0.5}).items()
    }
    (run / "summary.json").write_text(json.dumps({"metrics": entries}))
    (run / "usage.json").write_text(json.dumps({"totals": {"calls": 4, "cost_usd": 0.25}}))
    return run


@pytest.fixture
def make_run():
    return write_run
