"""``run.json``, typed: ``RunLog``, the record a run keeps of its own life (Inspect's ``EvalLog``).

The runner fills one ``RunLog`` and writes it through ``write_log`` (``_write``) at the start,
after every episode (the heartbeat) and at the end; every reader gets it back through
``read_log`` (``read_run`` does: ``RunRecord.provenance.log``). Keys a run did not reach (an
error, the sources of a run that stopped) are absent on disk and None here.

``version`` is the format's number (``LOG_VERSION``). Migration of older files: a ``run.json``
without ``version`` is version 0, every folder written before the number existed; its keys are
the ones version 1 has (older ones lack some: ``sources``, ``generator``, ``overrides``,
``first_started_unix``...), so it reads as version 1 with those at their defaults. A key this
version does not know is kept in ``extra`` and written back unchanged; a file of a newer
version than this code knows is an error naming the file (a newer recallbench wrote it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import cast

from recallbench.errors import DatasetFormatError
from recallbench.run.provenance import GitState
from recallbench.run.record import Problem
from recallbench.verdict import JSONValue

LOG_VERSION = 1

# The keys every run.json since version 0 has, in their order on disk; the others are written
# only once known (``RunLog.to_dict``), as before the version existed.
_ALWAYS = (
    "status",
    "attempt",
    "config_hash",
    "overrides",
    "git_sha",
    "git_dirty",
    "git_diff_sha256",
    "versions",
    "dataset_sha256",
    "n_episodes",
    "started_unix",
    "first_started_unix",
    "host",
    "pid",
)


@dataclass
class RunLog:
    """What ``run.json`` holds: status, identity, provenance and the run's life (``run.record``).

    Mutable: the runner keeps one and changes its status and counts as the run goes.
    """

    status: str = "unknown"  # running, finished, degraded, interrupted, failed (run.record)
    attempt: int | None = None
    config_hash: str | None = None
    config_hash_version: int | None = None  # run.record.CONFIG_HASH_VERSION (None: rule 1)
    overrides: list[str] = field(default_factory=list)
    git_sha: str | None = None
    git_dirty: bool | None = None
    git_diff_sha256: str | None = None
    versions: dict[str, str] = field(default_factory=dict)
    dataset_sha256: str | None = None
    n_episodes: int | None = None
    started_unix: float | None = None
    first_started_unix: float | None = None
    host: str | None = None
    pid: int | None = None
    heartbeat_unix: float | None = None
    imported: JSONValue = None  # an imported answer file's provenance (protocol.provenance())
    replayed_unix: float | None = None
    sources: dict[str, dict[str, str]] | None = None  # run.sources: {modules, reads}: sha256s
    health: list[Problem] | None = None  # a degraded run's unhealthy tasks
    reason: str | None = None  # why a budget or the store stopped it
    signal: str | None = None  # the signal that interrupted it
    error: str | None = None  # a failed run's error
    generator: dict[str, JSONValue] | None = None  # llm.describe(): backend, model, structured
    finished_unix: float | None = None
    episodes_done: int | None = None
    predictions_done: int | None = None
    redone_episodes: list[dict[str, JSONValue]] | None = None
    version: int = LOG_VERSION
    extra: dict[str, JSONValue] = field(default_factory=dict)  # keys this version does not know

    @property
    def code(self) -> GitState:
        """The commit, dirty flag and diff hash (``run.provenance.git_state``'s keys)."""
        return {
            "git_sha": self.git_sha,
            "git_dirty": self.git_dirty,
            "git_diff_sha256": self.git_diff_sha256,
        }

    @property
    def stop_reason(self) -> str | None:
        """Why the run did not finish: the budget's or store's reason, the error or the signal."""
        return self.reason or self.error or self.signal

    def to_dict(self) -> dict[str, JSONValue]:
        """The ``run.json`` object: the keys of every version, then those known so far."""
        out: dict[str, JSONValue] = {"version": self.version}
        for f in fields(self):
            if f.name in ("version", "extra"):
                continue
            value = getattr(self, f.name)
            if f.name in _ALWAYS or value is not None:
                out[f.name] = value
        return {**out, **self.extra}

    @classmethod
    def from_dict(cls, data: Mapping[str, object], where: Path | str = "a run log") -> RunLog:
        """Read a ``run.json`` object of any version (see the module docstring)."""
        version = data.get("version", 0)
        if not isinstance(version, int) or isinstance(version, bool) or version < 0:
            raise DatasetFormatError(f"{where}: 'version' is not a format number: {version!r}")
        if version > LOG_VERSION:
            raise DatasetFormatError(
                f"{where}: run.json version {version}, this recallbench reads up to "
                f"{LOG_VERSION}: a newer recallbench wrote it (upgrade to read it)"
            )
        known = {f.name for f in fields(cls)} - {"version", "extra"}
        # json.loads gives JSON values only: what a key this version does not know holds
        extra = cast("dict[str, JSONValue]", {k: v for k, v in data.items() if k not in known})
        log = cls(extra={k: v for k, v in extra.items() if k != "version"})
        for name in known & set(data):
            setattr(log, name, _field(name, data[name], where))
        return log


_TYPES: dict[str, tuple[type, ...]] = {
    "status": (str,),
    "config_hash": (str,),
    "git_sha": (str,),
    "git_diff_sha256": (str,),
    "dataset_sha256": (str,),
    "host": (str,),
    "reason": (str,),
    "signal": (str,),
    "error": (str,),
    "git_dirty": (bool,),
    "attempt": (int,),
    "config_hash_version": (int,),
    "n_episodes": (int,),
    "pid": (int,),
    "episodes_done": (int,),
    "predictions_done": (int,),
    "started_unix": (int, float),
    "first_started_unix": (int, float),
    "heartbeat_unix": (int, float),
    "replayed_unix": (int, float),
    "finished_unix": (int, float),
    "overrides": (list,),
    "health": (list,),
    "redone_episodes": (list,),
    "versions": (dict,),
    "sources": (dict,),
    "generator": (dict,),
}


def _field(name: str, value: object, where: Path | str) -> object:
    """One key's value, checked against its type (None stays None: a key not known yet)."""
    if value is None or name == "imported":
        return value
    expected = _TYPES[name]
    if not isinstance(value, expected) or (isinstance(value, bool) and bool not in expected):
        names = " or ".join(t.__name__ for t in expected)
        raise DatasetFormatError(f"{where}: {name!r} should be {names}, got {value!r:.80}")
    if isinstance(value, list) and name == "overrides":
        return [str(v) for v in value]
    if isinstance(value, dict) and name == "versions":
        return {str(k): str(v) for k, v in value.items()}
    return value
