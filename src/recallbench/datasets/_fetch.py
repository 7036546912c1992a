"""Fetching for ``download.py``: checked HTTP transfers, tarball extraction, GitHub trees and
Hugging Face Hub files, with a fast offline probe per host. See ``download.py``'s docstring.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import shutil
import tarfile
import tempfile
import urllib.parse
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from recallbench.datasets._sources import (
    DownloadError,
    Endpoints,
    GitTree,
    HubFiles,
    OfflineError,
    Tarball,
)

PROBE_TIMEOUT_S = 5.0  # one HEAD per host before anything else: fail fast when offline
READ_TIMEOUT_S = 120.0
HEADERS = {"User-Agent": "recallbench-download"}
CHUNK = 1 << 20
Log = Callable[[str], object]  # where progress lines go (``print``)

OFFLINE_HINT = (
    "No internet? Point the harness at an existing copy of the data instead: "
    "`make <target> DATA_DIR=/path/to/data` or `export RECALLBENCH_DATA_DIR=/path/to/data` "
    "(a folder holding lufy/, gvd/, msc/, carecall_mem/ ... like ../shared/data)."
)


def sha256_file(path: Path) -> str:
    """Return the hex sha256 of a file."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def git_blob_sha1(path: Path) -> str:
    """Return git's blob hash of a file (what a GitHub tree lists as ``sha``)."""
    digest = hashlib.sha1(f"blob {path.stat().st_size}\0".encode())
    with path.open("rb") as fh:
        while chunk := fh.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


class _Http:
    """urllib with a fast reachability probe per host and located errors."""

    def __init__(self) -> None:
        self._reached: set[str] = set()

    def _reach(self, url: str) -> None:
        """Probe the host once with a short timeout: offline fails here, fast and clearly."""
        host = urllib.parse.urlsplit(url).netloc
        if host in self._reached:
            return
        probe = urllib.request.Request(url, method="HEAD", headers=HEADERS)
        try:
            urllib.request.urlopen(probe, timeout=PROBE_TIMEOUT_S).close()
        except urllib.error.HTTPError:
            pass  # the host answered (some refuse HEAD): it is reachable
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise OfflineError(f"cannot reach {host} ({reason}). {OFFLINE_HINT}") from None
        self._reached.add(host)

    def open(self, url: str) -> Any:  # the urlopen response (a context manager)
        self._reach(url)
        request = urllib.request.Request(url, headers=HEADERS)
        try:
            return urllib.request.urlopen(request, timeout=READ_TIMEOUT_S)
        except urllib.error.HTTPError as exc:
            raise DownloadError(f"{url}: HTTP {exc.code} {exc.reason}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise DownloadError(f"{url}: {getattr(exc, 'reason', exc)}") from None

    def fetch(self, url: str, dest: Path) -> None:
        """Stream ``url`` to ``dest`` through a temp file + rename."""
        self._reach(url)  # before touching the disk
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
        try:
            with os.fdopen(fd, "wb") as fh, self.open(url) as response:
                try:
                    shutil.copyfileobj(response, fh, CHUNK)
                except OSError as exc:
                    raise DownloadError(f"{url}: interrupted ({exc})") from None
            os.replace(tmp, dest)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def json(self, url: str) -> Any:
        with self.open(url) as response:
            return json.loads(response.read().decode("utf-8"))


def _check(path: Path, expected: str | None, hasher: Callable[[Path], str], url: str) -> None:
    if expected is None:
        return
    actual = hasher(path)
    if actual != expected:
        path.unlink(missing_ok=True)
        raise DownloadError(f"{url}: checksum mismatch (expected {expected}, got {actual})")


def _fetch_checked(
    http: _Http,
    url: str,
    dest: Path,
    expected: str | None,
    hasher: Callable[[Path], str],
    log: Log,
) -> None:
    # Writes are atomic, so an existing file is complete; with a checksum it is also verified.
    if dest.is_file() and (expected is None or hasher(dest) == expected):
        return
    log(f"  {url} -> {dest}")
    http.fetch(url, dest)
    _check(dest, expected, hasher, url)


def _check_members(tar: tarfile.TarFile) -> None:
    for member in tar.getmembers():
        parts = Path(member.name).parts
        if member.name.startswith(("/", "\\")) or ".." in parts:
            raise tarfile.TarError(f"unsafe path {member.name!r}")
        if not (member.isfile() or member.isdir()):
            raise tarfile.TarError(f"{member.name!r} is not a regular file or folder")


def _unzip(archive: Path, into: str) -> None:
    """Unpack a zip archive (LoCoMo's release), refusing absolute paths, ``..`` and links, as
    :func:`_check_members` does for tarballs."""
    import stat
    import zipfile

    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            parts = Path(info.filename).parts
            if info.filename.startswith(("/", "\\")) or ".." in parts:
                raise DownloadError(
                    f"{archive.name}: refused to unpack (unsafe path {info.filename!r})"
                )
            if stat.S_ISLNK(info.external_attr >> 16):
                raise DownloadError(
                    f"{archive.name}: refused to unpack ({info.filename!r} is a link)"
                )
        zf.extractall(into)


def extract_tarball(archive: Path, dest: Path, marker: str) -> Path:
    """Unpack ``archive`` (a tarball, or a ``.zip``) so that the folder holding ``marker``
    becomes ``dest``.

    Refuses absolute paths, ``..``, links and device files (our own check, so it also holds on
    Python 3.11.0-3.11.3, whose tarfile lacks extraction filters; newer Pythons also apply the
    ``data`` filter). Raises DownloadError when ``marker`` is not in the archive.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=".extract-") as tmp:
        try:
            if archive.suffix == ".zip":
                _unzip(archive, tmp)
            else:
                with tarfile.open(archive) as tar:
                    _check_members(tar)
                    if hasattr(tarfile, "data_filter"):
                        tar.extractall(tmp, filter="data")
                    else:  # Python < 3.11.4: members were checked above
                        tar.extractall(tmp)
        except (getattr(tarfile, "FilterError", tarfile.TarError), tarfile.TarError) as exc:
            raise DownloadError(f"{archive.name}: refused to unpack ({exc})") from None
        found = sorted(Path(tmp).rglob(marker), key=lambda p: len(p.parts))
        if not found:
            raise DownloadError(f"{archive.name}: {marker!r} not found in the archive")
        root = found[0].parent
        dest.mkdir(parents=True, exist_ok=True)
        for item in root.iterdir():
            target = dest / item.name
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
            shutil.move(str(item), target)
    return dest


def _fetch_tarball(http: _Http, tb: Tarball, folder: Path, log: Log) -> None:
    dest = folder / tb.dest
    missing = [f for f in tb.expect if not (dest / f).is_file()]
    if (dest / tb.marker).exists() and not missing:
        return
    if missing and (dest / tb.marker).exists():
        log(f"  {dest} lacks {len(missing)} file(s) (first: {missing[0]}): fetching again")
    archive = folder / Path(urllib.parse.urlsplit(tb.url).path).name
    _fetch_checked(http, tb.url, archive, tb.sha256, sha256_file, log)
    log(f"  unpacking {archive.name} -> {dest}")
    extract_tarball(archive, dest, tb.marker)
    archive.unlink()
    still = [f for f in tb.expect if not (dest / f).is_file()]
    if still:
        raise DownloadError(f"{archive.name}: the archive lacks {still} (expected in {dest})")


def _fetch_tree(http: _Http, ep: Endpoints, tree: GitTree, folder: Path, log: Log) -> None:
    listing = http.json(f"{ep.github_api}/repos/{tree.repo}/git/trees/{tree.commit}?recursive=1")
    if listing.get("truncated"):
        raise DownloadError(f"{tree.repo}@{tree.commit}: GitHub truncated the tree listing")
    blobs = [
        entry
        for entry in listing.get("tree", [])
        if entry.get("type") == "blob"
        and any(fnmatch.fnmatchcase(entry["path"], p) for p in tree.patterns)
    ]
    if not blobs:
        raise DownloadError(f"{tree.repo}@{tree.commit}: no file matches {tree.patterns}")
    raw = f"{ep.github_raw}/{tree.repo}/{tree.commit}"

    def one(entry: dict[str, Any]) -> None:
        url = f"{raw}/{urllib.parse.quote(entry['path'])}"
        _fetch_checked(http, url, folder / entry["path"], entry["sha"], git_blob_sha1, log)

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(one, blobs))


def _fetch_hub(hub: HubFiles, ep: Endpoints, folder: Path, http: _Http, log: Log) -> None:
    if os.environ.get("HF_HUB_OFFLINE", "0") not in ("", "0", "false", "False"):
        raise OfflineError(
            f"HF_HUB_OFFLINE is set, so {hub.repo} cannot be fetched from the Hub; unset it "
            f"(`env -u HF_HUB_OFFLINE ...`) on a machine with internet. {OFFLINE_HINT}"
        )
    http.open(f"{ep.hf}/api/datasets/{hub.repo}").close()  # fast offline check
    from huggingface_hub import hf_hub_download, snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    log(f"  hf://datasets/{hub.repo} -> {folder}")
    try:
        if hub.files:
            for name in hub.files:
                hf_hub_download(
                    hub.repo, name, repo_type="dataset", local_dir=folder, endpoint=ep.hf
                )
        else:
            snapshot_download(hub.repo, repo_type="dataset", local_dir=folder, endpoint=ep.hf)
    except (HfHubHTTPError, LocalEntryNotFoundError, OSError) as exc:
        raise DownloadError(f"hf://datasets/{hub.repo}: {exc}") from None
