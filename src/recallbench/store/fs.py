"""Refuse, before any work, the folders a run cannot use: unwritable ones, SQLite on a network FS.

SQLite's WAL mode needs shared memory and POSIX locks that NFS, Lustre, GPFS, CIFS and FUSE
file systems do not give reliably: parallel jobs then see ``database is locked`` or a corrupt
file, and one corrupt shared cache stops every job of a sweep. ``network_fs`` reads the mount
table (``/proc/self/mounts``: the longest mount point above the folder) and names the file
system type when it is one of those.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

# Mount types on which SQLite's locking (and WAL's shared memory) is not safe across processes.
NETWORK_FS = frozenset(
    {
        "nfs",
        "nfs4",
        "cifs",
        "smb3",
        "smbfs",
        "lustre",
        "gpfs",
        "beegfs",
        "ceph",
        "glusterfs",
        "panfs",
        "afs",
        "9p",
        "wekafs",
    }
)


def _unescape(field: str) -> str:
    """Mount-table fields escape space, tab, newline and backslash as octal (``\\040``)."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def network_fs(path: str | Path, mounts: str | None = None) -> str | None:
    """The network file-system type that holds ``path`` (None: a local one).

    ``mounts`` is the text of a mount table (default: ``/proc/self/mounts``; where there is none,
    e.g. macOS, nothing is refused)."""
    if mounts is None:
        try:
            mounts = Path("/proc/self/mounts").read_text()
        except OSError:
            return None
    target = os.path.realpath(path)
    best, kind = "", ""
    for line in mounts.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        point, fstype = _unescape(parts[1]), parts[2]
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, kind = point, fstype
    base = kind.removeprefix("fuse.")
    if base in NETWORK_FS or kind.startswith("fuse.") and base in {"sshfs", "s3fs", "gcsfuse"}:
        return kind
    return None


def unwritable(folder: str | Path) -> str | None:
    """Why ``folder`` cannot hold run files (None: it can): it is created, then a file is made
    and removed in it."""
    path = Path(folder)
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=path, prefix=".write-test-")
        os.close(fd)
        os.unlink(name)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None
