"""Resuming into a run folder: the earlier attempt's ``run.json``, the refusal to continue a
folder that holds another config's or another dataset's run (``resume_dir=``, a reused job),
and the reuse of a finished run whose identity matches (``reusable_run``).

A run's identity is what decides its numbers: the config hash (``run.record.config_hash``:
where its caches live is not part of it; a run.json hashed under the older rule is migrated by
``recorded_hash``), the
packages that shape results (recallbench's own version number aside: ``run.provenance.same_versions``), the sha256 of the episodes it saw, and the code it ran: the sha256
of every project module its process imported and of every project or data file it read, which
``run.json`` records under ``sources`` (``run.sources``). A job whose newest usable run under its
tag has the same config, packages and episodes and whose recorded files are all unchanged on
disk is not run again, whatever was committed since (a table reads that newest run anyway, so
it comes back with identical files); ``RECALLBENCH_RERUN=1`` (``make ... RERUN=1``) runs it
again. An older matching run behind a newer run of another config is not reused: the table
reads the newest one. A run recorded before ``sources`` existed is reused under the rule it was
recorded under: the same commit, dirty flag and diff hash (``run.provenance.git_state``), which
implies the same code.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from recallbench.errors import DatasetFormatError, ResumeError
from recallbench.metrics.summary import has_summary
from recallbench.records import Episode
from recallbench.run.provenance import episodes_sha256, git_state, package_versions, same_versions
from recallbench.run.read import CONFIG_FILE, read_config
from recallbench.run.record import CONFIG_HASH_VERSION, USABLE, config_diff, config_hash
from recallbench.run.sources import changed

RERUN_ENV = "RECALLBENCH_RERUN"  # 1: run every job again even when a matching run finished
CODE_KEYS = ("git_sha", "git_dirty", "git_diff_sha256")


def rerun_asked() -> bool:
    """Whether ``RECALLBENCH_RERUN`` asks for new runs (any value but "", "0", "false")."""
    return os.environ.get(RERUN_ENV, "").strip().lower() not in ("", "0", "false", "no")


def run_identity(config: dict[str, Any], episodes: Sequence[Episode]) -> dict[str, Any]:
    """What a finished run's ``run.json`` must hold to be reused for ``config`` on ``episodes``
    (besides unchanged ``sources``: ``same_code``)."""
    return {
        "config_hash": config_hash(config),
        "versions": package_versions(),
        "dataset_sha256": episodes_sha256(episodes),
    }


def reusable_run(results_dir: Path, tag: str, job: str, identity: dict[str, Any]) -> Path | None:
    """The newest usable run of ``job`` under ``tag`` when its identity is ``identity``.

    None when the job has no usable run, or when its newest usable run differs in identity or
    in the code it ran (``same_code``): then the job runs anew.
    """
    root = results_dir / "runs" / tag
    stamps = (
        sorted((p for p in root.iterdir() if p.is_dir()), reverse=True) if root.is_dir() else []
    )
    for folder in (s / job for s in stamps):
        info = previous_info(folder)
        if info.get("status") not in USABLE or not has_summary(folder):
            continue
        recorded = {**info, "config_hash": recorded_hash(folder, info)}
        same = all(
            same_versions(info.get(k), v) if k == "versions" else recorded.get(k) == v
            for k, v in identity.items()
        )
        return folder if same and same_code(info) else None
    return None


def same_code(info: dict[str, Any]) -> bool:
    """Whether the code a finished run ran is the code on disk now: every file its ``sources``
    lists is unchanged; a run without ``sources`` (recorded before them) by its commit, dirty
    flag and diff hash, and never when git cannot say (no checkout, a failed ``git diff``)."""
    if "sources" in info:
        return isinstance(info["sources"], dict) and changed(info["sources"]) is None
    code = git_state()
    if code["git_sha"] is None or code["git_dirty"] is None:
        return False
    return all(info.get(k) == code[k] for k in CODE_KEYS)


def recorded_hash(run_dir: Path, info: dict[str, Any]) -> str | None:
    """The config hash of the run in ``run_dir`` (``info``: its run.json) under today's rule
    (``run.record.CONFIG_HASH_VERSION``), to compare with ``config_hash`` of a config now.

    A run recorded under rule 1 (no ``config_hash_version``: cache locations were part of the
    hash) is migrated: its ``config.yaml`` hashed under today's rule, provided that file hashes
    under rule 1 to what run.json recorded; otherwise the recorded hash, which no config of today
    matches (the run is foreign: never reused, never resumed by mistake)."""
    recorded = info.get("config_hash")
    version = info.get("config_hash_version", 1)
    if not isinstance(recorded, str) or version == CONFIG_HASH_VERSION:
        return recorded if isinstance(recorded, str) else None
    try:
        config = read_config(run_dir).raw
    except DatasetFormatError:  # an unreadable config.yaml: nothing to migrate from
        return recorded
    if version == 1 and config and config_hash(config, 1) == recorded:
        return config_hash(config)
    return recorded


def previous_info(run_dir: Path) -> dict[str, Any]:
    """The ``run.json`` of an earlier attempt in this folder (empty for a new run)."""
    path = run_dir / "run.json"
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def refuse_foreign(
    run_dir: Path, config: dict[str, Any], previous: dict[str, Any], digest: str, dataset_sha: str
) -> None:
    """A run folder belongs to one config and one dataset: refuse to continue another's."""
    if not previous:
        return
    old_hash = recorded_hash(run_dir, previous)
    if old_hash is not None and old_hash != digest:
        old_config = read_config(run_dir).raw
        raise ResumeError(
            f"{run_dir} holds a run of another config (config hash {old_hash}, this "
            f"one {digest}: {config_diff(old_config, config) or f'see {CONFIG_FILE}'}); "
            "give this run its own folder (job=<name>, or a new RECALLBENCH_STAMP) or resume "
            f"it with the config in that folder's {CONFIG_FILE}"
        )
    if previous.get("dataset_sha256") not in (None, dataset_sha):
        raise ResumeError(
            f"{run_dir} holds a run on other data (dataset sha256 "
            f"{previous['dataset_sha256'][:12]}, now {dataset_sha[:12]}): the episodes "
            "differ (data files, dataset options or episodes=); start a new run folder"
        )
