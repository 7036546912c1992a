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

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from recallbench.errors import DatasetFormatError, ResumeError
from recallbench.records import Episode
from recallbench.run.provenance import episodes_sha256, git_state, package_versions, same_versions
from recallbench.run.read import CONFIG_FILE, RunLog, read_config, read_log, read_run
from recallbench.run.record import CONFIG_HASH_VERSION, config_diff, config_hash
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
        log = previous_log(folder)
        if log is None or not read_run(folder).usable:
            continue
        recorded = {**log.to_dict(), "config_hash": recorded_hash(folder, log)}
        same = all(
            same_versions(recorded.get(k), v) if k == "versions" else recorded.get(k) == v
            for k, v in identity.items()
        )
        return folder if same and same_code(recorded) else None
    return None


def same_code(recorded: object) -> bool:
    """Whether the code a record was made with (a run's ``run.json``, a command's or a table's
    record: ``cli.reuse.code_identity``) is the code on disk now. The one rule for all of them:

    - the packages it lists (``versions``; recallbench's own version number aside:
      ``run.provenance.same_versions``) are installed now;
    - every file its ``sources`` lists is unchanged (``run.sources.changed``);
    - a record without ``sources`` (a run recorded before them) by its commit, dirty flag and
      diff hash, never when git cannot say (no checkout, a failed ``git diff``).
    """
    if not isinstance(recorded, Mapping):
        return False
    if "versions" in recorded and not same_versions(recorded["versions"]):
        return False
    if "sources" in recorded:
        return isinstance(recorded["sources"], dict) and changed(recorded["sources"]) is None
    code = git_state()
    if code["git_sha"] is None or code["git_dirty"] is None:
        return False
    return all(recorded.get(k) == v for k, v in code.items() if k in CODE_KEYS)


def recorded_hash(run_dir: Path, log: RunLog) -> str | None:
    """The config hash of the run in ``run_dir`` (``log``: its run.json) under today's rule
    (``run.record.CONFIG_HASH_VERSION``), to compare with ``config_hash`` of a config now.

    A run recorded under rule 1 (no ``config_hash_version``: cache locations were part of the
    hash) is migrated: its ``config.yaml`` hashed under today's rule, provided that file hashes
    under rule 1 to what run.json recorded; otherwise the recorded hash, which no config of today
    matches (the run is foreign: never reused, never resumed by mistake)."""
    recorded = log.config_hash
    version = log.config_hash_version or 1
    if recorded is None or version == CONFIG_HASH_VERSION:
        return recorded
    try:
        config = read_config(run_dir).raw
    except DatasetFormatError:  # an unreadable config.yaml: nothing to migrate from
        return recorded
    if version == 1 and config and config_hash(config, 1) == recorded:
        return config_hash(config)
    return recorded


def previous_log(run_dir: Path) -> RunLog | None:
    """The ``run.json`` of an earlier attempt in this folder (None: a new run, or a record
    that cannot be read, which a new attempt then overwrites)."""
    try:
        return read_log(run_dir)
    except (OSError, DatasetFormatError):
        return None


def refuse_foreign(
    run_dir: Path, config: dict[str, Any], previous: RunLog | None, digest: str, dataset_sha: str
) -> None:
    """A run folder belongs to one config and one dataset: refuse to continue another's."""
    if previous is None:
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
    if previous.dataset_sha256 not in (None, dataset_sha):
        raise ResumeError(
            f"{run_dir} holds a run on other data (dataset sha256 "
            f"{previous.dataset_sha256[:12]}, now {dataset_sha[:12]}): the episodes "
            "differ (data files, dataset options or episodes=); start a new run folder"
        )
