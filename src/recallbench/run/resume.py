"""Resuming into a run folder: the earlier attempt's ``run.json``, and the refusal to continue a
folder that holds another config's or another dataset's run (``resume_dir=``, a reused job)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from recallbench.errors import ResumeError
from recallbench.run.record import config_diff


def previous_info(run_dir: Path) -> dict:
    """The ``run.json`` of an earlier attempt in this folder (empty for a new run)."""
    path = run_dir / "run.json"
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text())
    except ValueError:
        return {}


def refuse_foreign(
    run_dir: Path, config: dict, previous: dict, digest: str, dataset_sha: str
) -> None:
    """A run folder belongs to one config and one dataset: refuse to continue another's."""
    if not previous:
        return
    old_hash = previous.get("config_hash")
    if old_hash is not None and old_hash != digest:
        old_config: dict[str, Any] = {}
        if (run_dir / "config.yaml").is_file():
            old_config = yaml.safe_load((run_dir / "config.yaml").read_text()) or {}
        raise ResumeError(
            f"{run_dir} holds a run of another config (config hash {old_hash}, this "
            f"one {digest}: {config_diff(old_config, config) or 'see config.yaml'}); "
            "give this run its own folder (job=<name>, or a new RECALLBENCH_STAMP) or resume "
            "it with the config in that folder's config.yaml"
        )
    if previous.get("dataset_sha256") not in (None, dataset_sha):
        raise ResumeError(
            f"{run_dir} holds a run on other data (dataset sha256 "
            f"{previous['dataset_sha256'][:12]}, now {dataset_sha[:12]}): the episodes "
            "differ (data files, dataset options or episodes=); start a new run folder"
        )
