"""Results that can move (issue 53, item 4): where a cache lives is not part of a run's identity.

A judge's reply cache (``judge.cache_path``, and the protocol's copy of the judge), LUFY's
arousal regressors (``memory.arousal_cache_dir``) and TeaFarm's files resolve under
``paths.results_dir``; they entered the config hash, so a results folder moved elsewhere ran
every finished job again. A run.json hashed the old way is migrated (``run.resume.
recorded_hash``): it is still reused and resumed, and a folder of another config is still
refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"
# A LUFY QA run with the LLM judge (on the extractive backend): every kind of cache location
ARGS = (
    "dataset=lufy",
    "memory=lufy",
    "protocol=qa_lufy",
    "+judge=llm",
    "episodes=1",
    "embedder=hashing",
    "memory.surprise=unigram",
    "tag=m",
)


@pytest.fixture
def reuse(monkeypatch):
    monkeypatch.setenv("RECALLBENCH_DATA_DIR", str(FIXTURES))
    monkeypatch.delenv("RECALLBENCH_RERUN", raising=False)  # the conftest's: every job runs


def _runs(results: Path) -> list[Path]:
    return sorted(p.parent for p in results.glob("runs/m/*/*/run.json"))


def _first_run(run_cli, results: Path) -> Path:
    done = run_cli(*ARGS, results=results)
    assert done.status == 0, done.err
    [run] = _runs(results)
    config = yaml.safe_load((run / "config.yaml").read_text())
    where = str(results / "cache")  # the locations really were under the results folder
    assert config["judge"]["cache_path"].startswith(where)
    assert config["protocol"]["judge"]["cache_path"].startswith(where)
    assert config["memory"]["arousal_cache_dir"].startswith(where)
    return run


def _rerun(run_cli, results: Path, *extra: str):
    done = run_cli(*ARGS, *extra, results=results)
    assert done.status == 0, done.err
    return done


def _as_recorded_before(run: Path) -> None:
    """Rewrite run.json as the rule before issue 53 wrote it: the hash over the cache locations
    too, no ``config_hash_version``."""
    from recallbench.run.record import config_hash

    info = json.loads((run / "run.json").read_text())
    config = yaml.safe_load((run / "config.yaml").read_text())
    info.pop("config_hash_version")
    assert config_hash(config, 1) != info["config_hash"]  # the rules differ on this config
    info["config_hash"] = config_hash(config, 1)
    (run / "run.json").write_text(json.dumps(info))


def test_a_moved_results_folder_reruns_nothing_even_hashed_the_old_way(run_cli, reuse, tmp_path):
    run = _first_run(run_cli, tmp_path / "results")
    elsewhere = tmp_path / "elsewhere"
    shutil.move(tmp_path / "results", elsewhere)
    again = _rerun(run_cli, elsewhere)
    moved = elsewhere / run.relative_to(tmp_path / "results")
    assert _runs(elsewhere) == [moved]  # nothing ran
    assert f"reusing {moved}" in again.err

    # a run.json written before issue 53 (cache locations hashed) is migrated
    _as_recorded_before(moved)
    third = tmp_path / "third"
    shutil.move(elsewhere, third)
    moved = third / run.relative_to(tmp_path / "results")
    assert f"reusing {moved}" in _rerun(run_cli, third).err and _runs(third) == [moved]
    # resumed: the same config is this folder's own (nothing to run)
    assert "already finished" in _rerun(run_cli, third, f"resume_dir={moved}").err
    # another config is still foreign
    foreign = run_cli(*ARGS, "memory.top_k=3", f"resume_dir={moved}", results=third)
    assert foreign.status != 0
    assert "holds a run of another config" in foreign.err and "memory.top_k: 2 -> 3" in foreign.err


def test_a_run_json_whose_config_yaml_is_not_what_it_hashed_is_not_migrated(tmp_path):
    from recallbench.run.read import RunLog
    from recallbench.run.record import config_hash
    from recallbench.run.resume import recorded_hash

    config = {"memory": {"k": 1, "cache_path": "/a/cache"}, "seed": 0}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    old = config_hash(config, 1)
    assert recorded_hash(tmp_path, RunLog(config_hash=old)) == config_hash(config)  # migrated
    other = config_hash({**config, "seed": 1}, 1)  # a run.json of another config than the yaml
    assert recorded_hash(tmp_path, RunLog(config_hash=other)) == other  # kept: matches nothing
    new = RunLog.from_dict({"config_hash": "abc", "config_hash_version": 2})
    assert recorded_hash(tmp_path, new) == "abc"  # today's rule: as recorded
    assert config_hash(config) == config_hash({**config, "memory": {"k": 1, "cache_path": "/b"}})
