"""A sweep seen from the command line: its places checked before work, its exit, its status.

- ``check_places(cfg)``: before any work (``cli.checks.check_command_line`` calls it for every
  job), a results or cache folder that cannot be written, a SQLite cache on a network file
  system (``store.fs.network_fs``) and a malformed ``store`` are one line each (exit 2).
- ``sweep_exit``: the command's exit once every job ended (``run.sweep.sweep_outcome``).
- ``status_main``: ``recallbench status <sweep folder>`` prints ``sweep.json`` and the ledger
  (``run.sweep.sweep_lines``, ``run.ledger``).

The job's own lifecycle (its folders, store, sweep record, stop lines) is the run layer's
(``run.job``, ``run.places``, ``run.sweep``).
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from omegaconf import DictConfig

from recallbench.errors import ConfigError
from recallbench.run.sweep import SWEEP_FILE, read_sweep, sweep_lines, sweep_outcome
from recallbench.store import is_server as is_server_store
from recallbench.store import network_fs, unwritable


def check_places(cfg: DictConfig, mounts: str | None = None) -> None:
    """Refuse, in one line, the folders and the store a job cannot use (module docstring).

    ``mounts``: a mount table's text (tests); default ``/proc/self/mounts``."""
    from recallbench.cli.build import plain
    from recallbench.llm.budget import Budget

    Budget.of(plain(cfg.get("sweep") or {}), "sweep")  # a bad bound is one line before work
    spec = str(cfg.get("store") or "sqlite")
    if spec != "sqlite" and not is_server_store(spec):
        raise ConfigError(
            f"store={spec!r}: expected sqlite (one machine) or redis://host:port/db (a Redis or "
            "Valkey server shared by every job)"
        )
    for key in ("results_dir", "cache_dir"):
        folder = cfg.paths[key]
        if why := unwritable(folder):
            raise ConfigError(
                f"paths.{key}={folder}: cannot write there ({why}); point paths.{key} at a "
                "folder this user can write"
            )
    if spec == "sqlite" and (kind := network_fs(cfg.paths.cache_dir, mounts)):
        raise ConfigError(
            f"paths.cache_dir={cfg.paths.cache_dir} is on a network file system ({kind}), where "
            "SQLite's locks are unsafe: use a server store (store=redis://host:port/db, README "
            "'Clusters') or a node-local cache (paths.cache_dir=/tmp/$USER/recallbench-cache)"
        )


def sweep_exit(folders: list[Path], since: float, argv: Sequence[str] | None = None) -> None:
    """After every job of the command ended: print why and exit with the worst outcome of
    those this invocation ran (``run.sweep.sweep_outcome``: 1 if any failed or died, 75 if any
    stopped ``interrupted``), or return when all finished."""
    code, line = sweep_outcome(folders, since, argv)
    if code == 0:
        return
    print(line, file=sys.stderr, flush=True)
    sys.exit(code)


def status_main(argv: list[str] | None = None) -> None:
    """``recallbench status <sweep folder>``: per job finished / running / interrupted / failed,
    the spend against the sweep budget and the command that resumes the rest."""
    import argparse

    from recallbench.cli.config import user_errors
    from recallbench.run.ledger import ledger_store, ledger_view, release_gone

    parser = argparse.ArgumentParser(
        prog="recallbench status",
        description="The state of a sweep's jobs (runs/<tag>/<stamp>/sweep.json)",
    )
    parser.add_argument("folder", help="a sweep folder results/runs/<tag>/<stamp>")
    parser.add_argument(
        "--release",
        action="store_true",
        help="give back the dollars reserved by processes that are gone (kill -9, a lost node)",
    )
    ns = parser.parse_args(argv)
    retry = shlex.join(["recallbench", "status", *(sys.argv[2:] if argv is None else argv)])
    with user_errors("recallbench status"):
        folder = Path(ns.folder)
        if not (folder / SWEEP_FILE).is_file():
            raise ConfigError(
                f"{folder}: no {SWEEP_FILE} (name a sweep folder results/runs/<tag>/<stamp> of "
                "a run started since sweeps record their state)"
            )
        data = read_sweep(folder / SWEEP_FILE)
        with ledger_store(data, retry) as store:
            released = release_gone(store, data) if store is not None and ns.release else None
            view = ledger_view(store, data) if store is not None else None
        print("\n".join(sweep_lines(folder, view)))
        if released:
            print(released)
