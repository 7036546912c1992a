"""Download the public datasets into a data root laid out like ``../shared/data``.

Each dataset lands in its own folder (``lufy/``, ``gvd/``, ``msc/``, ``carecall_mem/``,
``persona_chat/``, ``conversation_chronicles/``, ``teabag/``, ``lamp1/``) with the upstream file
names, so either this folder or an existing copy can be the harness's ``DATA_DIR``.

Sources are pinned: GitHub files at the commits named in each SOURCE.md (checked against sha256
when known, LUFY's 612 workbooks against the git blob hashes of the commit's tree), the ParlAI
tarballs by the sha256 ParlAI itself pins, the Hugging Face Hub for Conversation Chronicles and
TeaBag, the LaMP site for LaMP-1. Offline it fails fast: the first request of each host uses a
short timeout and any failure there raises :class:`OfflineError` with the way out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from recallbench.datasets._fetch import (
    Log,
    _fetch_checked,
    _fetch_hub,
    _fetch_tarball,
    _fetch_tree,
    _Http,
    extract_tarball,
    git_blob_sha1,
    sha256_file,
)
from recallbench.datasets._sources import (
    DownloadError,
    Endpoints,
    GitTree,
    HubFiles,
    OfflineError,
    RemoteFile,
    Source,
    Tarball,
    sources,
)
from recallbench.errors import did_you_mean
from recallbench.io import write_text

__all__ = [
    "DownloadError",
    "Endpoints",
    "GitTree",
    "HubFiles",
    "OfflineError",
    "RemoteFile",
    "Source",
    "Tarball",
    "download",
    "extract_tarball",
    "git_blob_sha1",
    "sha256_file",
    "sources",
]


def fetch_source(source: Source, out: Path, ep: Endpoints, http: _Http, log: Log = print) -> Path:
    """Download one dataset into ``out/<source.folder>`` and return that folder."""
    folder = out / source.folder
    log(f"{source.name}: -> {folder}  (license: {source.license})")
    for tree in source.trees:
        _fetch_tree(http, ep, tree, folder, log)
    for tb in source.tarballs:
        _fetch_tarball(http, tb, folder, log)
    for rf in source.files:
        _fetch_checked(http, rf.url, folder / rf.dest, rf.sha256, sha256_file, log)
    for hub in source.hub:
        _fetch_hub(hub, ep, folder, http, log)
    if source.note:
        log(f"  note: {source.note}")
    return folder


def download(
    out: str | Path,
    only: Iterable[str] | None = None,
    *,
    endpoints: Endpoints | None = None,
    catalog: dict[str, Source] | None = None,
    with_train: bool = False,
    log: Callable[[str], None] = print,
) -> list[Path]:
    """Download the datasets named in ``only`` (default: all) into the data root ``out``."""
    ep = endpoints or Endpoints()
    catalog = catalog if catalog is not None else sources(ep, with_train=with_train)
    names: Sequence[str] = list(only) if only else list(catalog)
    for name in names:
        if name not in catalog:
            raise did_you_mean("dataset", name, catalog)
    out = Path(out)
    http = _Http()
    folders = [fetch_source(catalog[name], out, ep, http, log) for name in names]
    _write_readme(out, [catalog[n] for n in names])
    return folders


def _write_readme(out: Path, done: Sequence[Source]) -> None:
    """Record what was downloaded (the harness recognises a data root by its README.md)."""
    readme = out / "README.md"
    lines = readme.read_text(encoding="utf-8").splitlines() if readme.is_file() else []
    if not lines:
        lines = [
            "# Data downloaded by scripts/download_data.py",
            "",
            "| folder | license |",
            "|---|---|",
        ]
    for source in done:
        row = f"| `{source.folder}/` | {source.license} |"
        if row not in lines:
            lines.append(row)
    write_text(readme, "\n".join(lines) + "\n")
