"""What a run is keyed on (``run.sources``): the modules it imported, the files it read.

Both ways: what the record covers (an imported module, a file read by path under the project or
a data folder, opened by ``open`` or ``os.open``) and what it leaves out on purpose or cannot
see (writes, files hashed as fingerprints, the results, files outside the project and the data,
files read by another process).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from recallbench.io import not_reads, opened_for_reading, watch_reads
from recallbench.llm.cache import source_fingerprint
from recallbench.run.sources import PROJECT, changed, sources


def _read(path: Path) -> None:
    path.read_bytes()


def test_reads_are_noted_writes_and_fingerprints_are_not(tmp_path):
    watch_reads()
    read, written, hashed, raw = (tmp_path / n for n in ("read", "written", "hashed", "raw"))
    for path in (read, hashed, raw):
        path.write_text(path.name)
    _read(read)
    written.write_text("out")
    with not_reads():
        _read(hashed)
    os.close(os.open(raw, os.O_RDONLY))
    os.close(os.open(written, os.O_WRONLY))
    opened = set(opened_for_reading())
    assert {str(read), str(raw)} <= opened
    assert str(written) not in opened and str(hashed) not in opened


def test_sources_keeps_the_project_and_data_files_a_process_read(tmp_path):
    watch_reads()
    data, results, elsewhere = tmp_path / "data", tmp_path / "results", tmp_path / "other"
    for folder in (data, results, elsewhere):
        folder.mkdir()
        (folder / "f.txt").write_text(folder.name)
        _read(folder / "f.txt")
    _read(PROJECT / "conf" / "config.yaml")
    found = sources([data], [results])
    assert "src/recallbench/run/sources.py" in found["modules"]  # imported: a module
    assert "conf/config.yaml" in found["reads"]  # project-relative: a moved clone matches
    assert str((data / "f.txt").resolve()) in found["reads"]
    assert not any(k.startswith((str(results), str(elsewhere))) for k in found["reads"])
    assert changed(found) is None


def test_changed_names_the_first_file_not_as_recorded(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.txt").write_text("a")
    _read(data / "a.txt")
    key = str((data / "a.txt").resolve())
    record = sources([data])
    (data / "a.txt").write_text("b")
    assert changed(record) == key
    (data / "a.txt").unlink()
    assert changed(record) == key
    assert changed({"modules": {}, "reads": {}}) == "sources"  # nothing recorded: not reused
    assert changed({"reads": {}}) == "sources"


def test_a_fingerprint_of_the_package_is_not_a_read():
    """The extractive backend hashes every package file into its cache key: not inputs."""
    watch_reads()
    source_fingerprint.cache_clear()
    source_fingerprint()
    found = sources()["reads"]
    assert not any(k.startswith("src/recallbench/memory/lufy/") for k in found)


def test_a_file_another_process_reads_is_not_seen(tmp_path):
    """The limit: the hook sees this process's opens only (a job starts no process that reads
    project files; docs/running.md)."""
    watch_reads()
    data = tmp_path / "data"
    data.mkdir()
    (data / "child.txt").write_text("x")
    child = data / "child.txt"
    subprocess.run([sys.executable, "-c", f"open({str(child)!r}).read()"], check=True)
    assert str(child.resolve()) not in sources([data])["reads"]
    _read(child)  # the same file read here is
    assert str(child.resolve()) in sources([data])["reads"]
