"""``run.places``: a job's folders (a new run, a resumed run, a resumed sweep) and the
``resume_dir`` a job refuses before any work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recallbench.errors import ResumeError
from recallbench.run.places import JobPlace, check_resume_dir, job_place, job_store
from recallbench.store import shared_store


def _config(tmp_path: Path, **keys: object) -> dict[str, object]:
    paths = {"results_dir": str(tmp_path / "results"), "cache_dir": str(tmp_path / "cache")}
    return {"tag": "t", "stamp": "s", "resume_dir": None, "paths": paths, **keys}


def _run_folder(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({"status": "interrupted"}))
    return folder


def test_a_new_job_writes_under_its_sweep_folder(tmp_path):
    place = job_place(_config(tmp_path), "j", sweep=False)
    sweep = tmp_path / "results" / "runs" / "t" / "s"
    assert place == JobPlace(sweep, sweep / "j", False)


def test_a_resumed_run_and_a_resumed_sweep_keep_their_folders(tmp_path):
    run = _run_folder(tmp_path / "runs" / "t" / "old" / "j")
    assert job_place(_config(tmp_path, resume_dir=str(run)), "j", sweep=False) == JobPlace(
        run.parent, run, False
    )
    place = job_place(_config(tmp_path, resume_dir=str(run.parent)), "k", sweep=True)
    assert place == JobPlace(run.parent, run.parent / "k", True)


def test_a_resume_dir_of_the_wrong_kind_is_refused_naming_what_to_give(tmp_path):
    run = _run_folder(tmp_path / "runs" / "t" / "old" / "j")
    with pytest.raises(ResumeError, match="no such folder"):
        check_resume_dir(str(tmp_path / "absent"))
    with pytest.raises(ResumeError, match=r"one run of a sweep; resume the whole sweep with -m"):
        check_resume_dir(str(run), sweep=True)
    with pytest.raises(ResumeError, match=r"not a run folder \(no run.json inside\) \(it holds"):
        check_resume_dir(str(run.parent), sweep=False)
    check_resume_dir(str(run))  # a run folder, alone: fine
    check_resume_dir(None)


def test_the_job_store_is_the_process_store_until_the_job_ends(tmp_path):
    said: list[str] = []
    with job_store(_config(tmp_path), said.append) as store:
        assert shared_store() is store and not store.server
        assert (tmp_path / "cache").is_dir()
    assert shared_store() is None and said == []
