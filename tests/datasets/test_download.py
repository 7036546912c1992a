"""Download logic: offline fast-fail, checksums, tar extraction, GitHub trees (loopback only)."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import threading
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from recallbench.datasets import FOLDERS, LOADERS
from recallbench.datasets.download import (
    DownloadError,
    Endpoints,
    GitTree,
    OfflineError,
    RemoteFile,
    Source,
    Tarball,
    download,
    extract_tarball,
    git_blob_sha1,
    sha256_file,
    sources,
)

DEAD = "http://127.0.0.1:9"  # discard port: connection refused at once
OFFLINE = Endpoints(github_raw=DEAD, github_api=DEAD, parlai=DEAD, lamp=DEAD, hf=DEAD)


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


@pytest.mark.parametrize("name", ["gvd", "lufy", "msc", "lamp1", "persona_chat"])
def test_offline_fails_fast_with_the_way_out(tmp_path, name):
    start = time.monotonic()
    with pytest.raises(OfflineError) as info:
        download(tmp_path, [name], endpoints=OFFLINE, log=lambda _: None)
    assert time.monotonic() - start < 3
    message = str(info.value)
    assert "cannot reach 127.0.0.1:9" in message
    assert "DATA_DIR=/path/to/data" in message and "RECALLBENCH_DATA_DIR" in message
    assert _files(tmp_path) == []


def test_hub_offline_mode_fails_before_any_request(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(OfflineError, match="HF_HUB_OFFLINE is set.*DATA_DIR="):
        download(tmp_path, ["cc"], endpoints=OFFLINE, log=lambda _: None)
    monkeypatch.delenv("HF_HUB_OFFLINE")
    with pytest.raises(OfflineError, match="cannot reach 127.0.0.1:9"):
        download(tmp_path, ["teabag"], endpoints=OFFLINE, log=lambda _: None)
    assert _files(tmp_path) == []


def test_catalog_covers_every_loader_with_pinned_checksums():
    catalog = sources()
    assert set(catalog) == set(LOADERS)
    for name, folder in FOLDERS.items():
        assert catalog[name].folder == folder
    github = [f for s in catalog.values() for f in s.files if "githubusercontent" in f.url]
    assert github and all(len(f.sha256 or "") == 64 for f in github)
    assert all(len(t.sha256) == 64 for s in catalog.values() for t in s.tarballs)
    assert catalog["lufy"].trees[0].commit == "e0695216d52a38ef39ec2f91708d324877e328bd"
    assert [h.files for h in sources(with_train=True)["cc"].hub][0][0] == "train.jsonl"


def test_hashes_match_known_vectors(tmp_path):
    path = tmp_path / "hello.txt"
    path.write_bytes(b"hello\n")
    assert git_blob_sha1(path) == "ce013625030ba8dba906f756967f9e9ca394464a"  # git hash-object
    assert sha256_file(path) == hashlib.sha256(b"hello\n").hexdigest()


def _tarball(path: Path, members: dict[str, bytes]) -> str:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return sha256_file(path)


@pytest.mark.parametrize("prefix", ["msc/", "", "deep/er/"])
def test_extract_tarball_places_the_marker_folder(tmp_path, prefix):
    archive = tmp_path / "a.tar.gz"
    _tarball(archive, {f"{prefix}msc_dialogue/session_2/test.txt": b"{}\n"})
    dest = extract_tarball(archive, tmp_path / "out" / "msc", "msc_dialogue")
    assert (dest / "msc_dialogue" / "session_2" / "test.txt").read_bytes() == b"{}\n"
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["msc"]  # temp dir cleaned up


def test_extract_tarball_refuses_unsafe_or_wrong_archives(tmp_path):
    evil = tmp_path / "evil.tar.gz"
    _tarball(evil, {"../escaped.txt": b"x", "msc_dialogue/a.txt": b"y"})
    with pytest.raises(DownloadError, match="refused to unpack"):
        extract_tarball(evil, tmp_path / "out", "msc_dialogue")
    assert not (tmp_path / "escaped.txt").exists()
    other = tmp_path / "other.tar.gz"
    _tarball(other, {"something/else.txt": b"z"})
    with pytest.raises(DownloadError, match="'msc_dialogue' not found"):
        extract_tarball(other, tmp_path / "out", "msc_dialogue")


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def server(tmp_path):
    """A loopback HTTP server over tmp_path/www; yields (root folder, base URL)."""
    root = tmp_path / "www"
    root.mkdir()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_tarball_download_checksum_and_unpack(server, tmp_path):
    root, base = server
    sha = _tarball(root / "msc_v0.1.tar.gz", {"msc/msc_dialogue/session_2/test.txt": b"{}\n"})
    good = Source(
        "msc",
        "msc",
        "test",
        tarballs=(Tarball(f"{base}/msc_v0.1.tar.gz", sha, "msc", "msc_dialogue"),),
    )
    out = tmp_path / "data"
    download(out, ["msc"], catalog={"msc": good}, log=lambda _: None)
    assert (out / "msc/msc/msc_dialogue/session_2/test.txt").read_bytes() == b"{}\n"
    assert not (out / "msc" / "msc_v0.1.tar.gz").exists()  # archive removed after unpacking
    assert "`msc/`" in (out / "README.md").read_text(encoding="utf-8")
    # already built: a second run needs no network at all
    download(out, ["msc"], catalog={"msc": good}, endpoints=OFFLINE, log=lambda _: None)

    bad = Source(
        "msc",
        "msc",
        "test",
        tarballs=(Tarball(f"{base}/msc_v0.1.tar.gz", "0" * 64, "msc", "msc_dialogue"),),
    )
    fresh = tmp_path / "fresh"
    with pytest.raises(DownloadError, match="checksum mismatch"):
        download(fresh, ["msc"], catalog={"msc": bad}, log=lambda _: None)
    assert _files(fresh) == []  # the corrupt archive is deleted, nothing unpacked


def test_plain_files_are_checked(server, tmp_path):
    root, base = server
    (root / "q.json").write_bytes(b"[]")
    sha = hashlib.sha256(b"[]").hexdigest()
    ok = Source("x", "x", "t", files=(RemoteFile(f"{base}/q.json", "sub/q.json", sha),))
    download(tmp_path / "d", ["x"], catalog={"x": ok}, log=lambda _: None)
    assert (tmp_path / "d/x/sub/q.json").read_bytes() == b"[]"
    missing = Source("x", "x", "t", files=(RemoteFile(f"{base}/nope.json", "nope.json"),))
    with pytest.raises(DownloadError, match="HTTP 404"):
        download(tmp_path / "d", ["x"], catalog={"x": missing}, log=lambda _: None)


def test_github_tree_download_verifies_blob_hashes(server, tmp_path):
    root, base = server
    repo = root / "o" / "r" / "c0ffee"
    wanted = {"Dataset/Naive RAG/Ann/Session1/Annotator0.xlsx": b"xlsx", "Code/e.csv": b"a,b\n"}
    for path, data in {**wanted, "README.md": b"# r\n"}.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_bytes(data)
    tree = [
        {"path": p, "type": "blob", "sha": git_blob_sha1(repo / p)} for p in [*wanted, "README.md"]
    ] + [{"path": "Dataset", "type": "tree", "sha": "0" * 40}]
    api = root / "repos" / "o" / "r" / "git" / "trees"
    api.mkdir(parents=True)
    (api / "c0ffee").write_text(json.dumps({"tree": tree, "truncated": False}))
    ep = Endpoints(github_raw=base, github_api=base, parlai=DEAD, lamp=DEAD, hf=DEAD)
    spec = Source(
        "lufy", "lufy", "t", trees=(GitTree("o/r", "c0ffee", ("Dataset/*.xlsx", "Code/e.csv")),)
    )
    download(tmp_path / "d", ["lufy"], endpoints=ep, catalog={"lufy": spec}, log=lambda _: None)
    got = {p.relative_to(tmp_path / "d/lufy").as_posix() for p in _files(tmp_path / "d/lufy")}
    assert got == set(wanted)  # README.md filtered out; the space in "Naive RAG" survived

    tree[0]["sha"] = "f" * 40  # the repository changed under us
    (api / "c0ffee").write_text(json.dumps({"tree": tree, "truncated": False}))
    with pytest.raises(DownloadError, match="checksum mismatch"):
        download(tmp_path / "e", ["lufy"], endpoints=ep, catalog={"lufy": spec}, log=lambda _: None)


def test_unknown_dataset_suggests(tmp_path):
    with pytest.raises(KeyError, match="Did you mean 'lufy'"):
        download(tmp_path, ["lufi"], endpoints=OFFLINE)


def test_msc_partial_copy_fetches_session_5(server, tmp_path):
    # A copy with only session_2 (like ../shared/data, which lacks session_4/5 dialogues) is
    # completed from the archive; an archive without the session-5 files is an error.
    root, base = server
    files = {
        f"msc/msc_dialogue/session_{n}/{split}.txt": b"{}\n"
        for n, split in ((2, "test"), (5, "valid"), (5, "test"))
    }
    sha = _tarball(root / "msc_v0.1.tar.gz", files)
    expect = ("msc_dialogue/session_5/valid.txt", "msc_dialogue/session_5/test.txt")
    full = Tarball(f"{base}/msc_v0.1.tar.gz", sha, "msc", "msc_dialogue", expect=expect)
    out = tmp_path / "data"
    partial = out / "msc/msc/msc_dialogue/session_2"
    partial.mkdir(parents=True)
    (partial / "test.txt").write_bytes(b"{}\n")
    log: list[str] = []
    download(
        out, ["msc"], catalog={"msc": Source("msc", "msc", "t", tarballs=(full,))}, log=log.append
    )
    assert (out / "msc/msc/msc_dialogue/session_5/test.txt").is_file()
    assert any("lacks 2 file(s)" in line for line in log)
    # complete now: no network needed
    download(
        out,
        ["msc"],
        catalog={"msc": Source("msc", "msc", "t", tarballs=(full,))},
        endpoints=OFFLINE,
        log=lambda _: None,
    )
    short = _tarball(root / "old.tar.gz", {"msc/msc_dialogue/session_2/test.txt": b"{}\n"})
    old = Tarball(f"{base}/old.tar.gz", short, "msc", "msc_dialogue", expect=expect)
    with pytest.raises(DownloadError, match="lacks"):
        download(
            tmp_path / "x",
            ["msc"],
            catalog={"msc": Source("msc", "msc", "t", tarballs=(old,))},
            log=lambda _: None,
        )


def test_msc_source_expects_the_session_5_files():
    (tarball,) = sources()["msc"].tarballs
    assert "msc_dialogue/session_5/test.txt" in tarball.expect
    assert "msc_dialogue/session_5/valid.txt" in tarball.expect
    assert "msc_dialogue/session_5/train.txt" not in tarball.expect  # valid/test only


def test_a_zip_release_unpacks_like_a_tarball_and_refuses_unsafe_paths(tmp_path):
    """LoCoMo ships a zip: its folder lands at ``dest``; ``..`` inside a zip is refused."""
    import zipfile

    from recallbench.datasets._fetch import extract_tarball

    good = tmp_path / "release.zip"
    with zipfile.ZipFile(good, "w") as zf:
        zf.writestr("data/multimodal_dialog/locomo10_v2/26.json", "{}")
        zf.writestr("data/multimodal_dialog/locomo10_v2/30.json", "[]")
    dest = tmp_path / "locomo" / "data" / "multimodal_dialog"
    extract_tarball(good, dest, "locomo10_v2")
    assert sorted(p.name for p in (dest / "locomo10_v2").iterdir()) == ["26.json", "30.json"]
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("../escape.json", "{}")
    with pytest.raises(DownloadError, match="unsafe path"):
        extract_tarball(bad, tmp_path / "out", "escape.json")


def test_the_locomo_entry_matches_the_release_beside_us(real_data_dir):
    """The pinned sha256 is the release's (../shared/data/locomo is byte-identical to it)."""
    release = real_data_dir / "locomo" / "locomo10.zip"
    if not release.is_file():
        pytest.skip(f"{release} not present")
    (tarball,) = sources()["locomo"].tarballs
    assert sha256_file(release) == tarball.sha256
