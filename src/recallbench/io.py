"""File writing for results: the one atomic writer, and safe file names; the files a process read.

Every result file (run folders, tables, figures, caches of trained models) is written through a
temporary file in the destination folder and ``os.replace``, so a reader or a crash never sees a
half-written file. JSON is written with ``allow_nan=False``: a NaN in a result is a bug to fix,
not a value to store.

    from recallbench.io import write_json, write_text, atomic_path
    write_json(out / "notes.json", notes)
    with atomic_path(out / "figure.png") as tmp:
        fig.savefig(tmp)

``watch_reads`` notes every path this process opens for reading from then on (an audit hook on
the ``open`` event of ``open``, ``io.open_code`` and ``os.open``; ``run.sources`` keys runs on
them); opens inside ``not_reads`` (hashing files to fingerprint them) are not noted.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from recallbench.errors import CacheError

__all__ = [
    "atomic_path",
    "connect_shared",
    "not_reads",
    "opened_for_reading",
    "safe_name",
    "unusable_cache",
    "write_json",
    "write_jsonl_rows",
    "write_text",
    "watch_reads",
    "write_yaml",
]
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_opened: set[str] = set()  # paths opened for reading since ``watch_reads``
_watching: list[bool] = [False]
_paused = threading.local()  # per thread: the audit hook runs in the thread that opens


def _note_open(event: str, args: tuple[object, ...]) -> None:
    """Note a path opened for reading (the ``open`` audit event: path, mode, flags)."""
    paused: int = getattr(_paused, "depth", 0)
    if event != "open" or paused:
        return
    path, mode, flags = (*args, None, None, None)[:3]
    if not isinstance(path, str | os.PathLike):
        return  # a file descriptor (opened by path before), or bytes
    if isinstance(mode, str):
        writes = any(c in mode for c in "wax+")
    else:
        writes = isinstance(flags, int) and bool(flags & _WRITE_FLAGS)
    if not writes:
        _opened.add(str(os.fspath(path)))


def watch_reads() -> None:
    """Note the files this process opens for reading from now on (idempotent: an audit hook
    cannot be removed, so one serves every command of a process)."""
    if not _watching[0]:
        sys.addaudithook(_note_open)
        _watching[0] = True


def opened_for_reading() -> list[str]:
    """The paths opened for reading since ``watch_reads`` (as given to ``open``), sorted."""
    return sorted(_opened)


@contextlib.contextmanager
def not_reads() -> Iterator[None]:
    """Opens in this thread inside the block are not noted: a file hashed to fingerprint it
    (``run.sources``, the extractive backend's ``source_fingerprint``) is not an input."""
    _paused.depth = getattr(_paused, "depth", 0) + 1
    try:
        yield
    finally:
        _paused.depth -= 1


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success rename it onto ``path``.

    The temporary file keeps ``path``'s suffix (writers such as ``np.savez`` or matplotlib pick
    the format from it). On an exception the temporary file is removed and ``path`` is untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=path.suffix)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8, newlines as given) to ``path`` atomically."""
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8", newline="") as fh:
        fh.write(text)


def write_json(
    path: str | Path,
    data: object,
    *,
    indent: int | None = 2,
    sort_keys: bool = True,
    default: Callable[[object], object] | None = None,
    allow_nan: bool = False,
) -> None:
    """Write ``data`` as JSON atomically (sorted keys, UTF-8, NaN refused; ``sort_keys``,
    ``default`` and ``allow_nan`` as ``json.dumps`` takes them)."""
    text = json.dumps(
        data,
        indent=indent,
        ensure_ascii=False,
        allow_nan=allow_nan,
        sort_keys=sort_keys,
        default=default,
    )
    write_text(path, text + ("\n" if indent else ""))


def write_jsonl_rows(path: str | Path, rows: Iterable[Mapping[str, object]]) -> None:
    """Write one JSON object per line atomically (UTF-8, NaN refused, keys in given order)."""
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n")


def write_yaml(path: str | Path, data: object) -> None:
    """Write ``data`` as YAML atomically (keys in given order, unicode kept)."""
    import yaml

    write_text(path, yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


def safe_name(name: str) -> str:
    """Return ``name`` with every character other than letters, digits and ``-_.`` as ``_``.

    Run folders name per-episode files with it (``items/<safe_name(episode_id)>.jsonl``), so
    readers of run folders must use it too.
    """
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def db_file(path: str | Path | None, what: str) -> str:
    """The file name of a SQLite cache or store at ``path``; no path is an error naming ``what``.

    ``str(None)`` is ``"None"``: a reply cache given no path once became a SQLite file named
    ``None`` in the working folder (``make test`` left one at the checkout's root). A caller
    without a file passes ``":memory:"`` or uses no cache at all."""
    if path is None or str(path).strip() in ("", "None"):
        raise ValueError(
            f"{what}: no file given ({path!r}); name a SQLite file, ':memory:' for a private "
            "cache, or use no cache"
        )
    return str(path)


def connect_shared(
    path: str | Path, schema: str, what: str, busy_timeout_s: float = 60.0
) -> sqlite3.Connection:
    """Open, and on first use create, a SQLite file that parallel processes share.

    The connection is in autocommit mode (``isolation_level=None``) with a busy timeout, in WAL
    journal mode, with ``schema`` (``CREATE ... IF NOT EXISTS`` statements) applied. That set-up
    runs under an exclusive lock on ``<path>.lock`` (``filelock``): switching a new file to WAL
    needs SQLite's exclusive lock, and SQLite does not always call its busy handler there, so
    processes that opened one new file at the same moment (a joblib sweep, a SLURM array) failed
    with ``database is locked`` (8 processes x 20 new files: 11 of 160 opens) although the busy
    timeout was 60 s. Once the file is in WAL mode (it stays so), readers and writers only ever
    wait through the busy handler. ``":memory:"`` needs no lock.
    """
    import filelock

    name = str(path)
    memory = name == ":memory:"
    if not memory:
        Path(name).parent.mkdir(parents=True, exist_ok=True)
    lock = contextlib.nullcontext() if memory else filelock.FileLock(f"{name}.lock")
    conn = sqlite3.connect(
        name, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False
    )
    try:
        with lock, unusable_cache(name, what):
            conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.executescript(schema)
    except BaseException:
        conn.close()
        raise
    return conn


@contextlib.contextmanager
def unusable_cache(path: str | Path, what: str) -> Iterator[None]:
    """Turn SQLite's "file is not a database" (and kin) into a ``CacheError`` saying what to do."""
    try:
        yield
    except sqlite3.DatabaseError as exc:
        if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
            raise
        raise CacheError(
            f"{what} {path} is not usable ({exc}): set it aside with `mv {path} {path}.corrupt`"
            " (a new cache starts empty; cached replies are recomputed) or point"
            " paths.cache_dir at another folder"
        ) from exc


def write_immediate(conn: sqlite3.Connection, sql: str, rows: Iterable[Sequence[object]]) -> None:
    """``executemany(sql, rows)`` in one ``BEGIN IMMEDIATE`` transaction, rolled back on error.

    IMMEDIATE takes the write lock up front, so SQLite waits through its busy handler instead of
    failing a read->write upgrade under concurrent writers (the shared caches' writes).
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.executemany(sql, rows)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
