"""Contract over every dataset config: loads its fixture, yields valid, leak-guarded episodes."""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import OmegaConf

from recallbench.cli.build import build_dataset
from recallbench.datasets import LOADERS, load
from recallbench.records import Episode

CONF = Path(__file__).resolve().parents[2] / "conf" / "dataset"
CONFIGS = sorted(CONF.glob("*.yaml"))


def test_every_loader_has_a_config():
    assert {p.stem for p in CONFIGS} >= set(LOADERS)


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_dataset_config_loads_fixture(path, fixtures_dir):
    cfg = OmegaConf.load(path)
    assert cfg.name in LOADERS, f"{path.name}: name {cfg.name!r} is not a registered loader"
    # the run builds it by _target_; load(name) finds the same function through LOADERS
    assert LOADERS[cfg.name] == cfg._target_, path.name
    options = OmegaConf.to_container(cfg.get("options") or {}, resolve=True)
    node = {
        "_target_": cfg._target_,
        "name": cfg.name,
        "data_dir": fixtures_dir,
        "options": options,
    }
    episodes = build_dataset(node)
    assert episodes == load(cfg.name, fixtures_dir, **options)
    assert episodes and all(isinstance(e, Episode) for e in episodes)
    ids = [e.episode_id for e in episodes]
    assert len(ids) == len(set(ids)), "episode ids must be unique"
    for ep in episodes:
        assert Episode.from_dict(ep.to_dict()) == ep
        indices = [s.index for s in ep.sessions]
        assert indices == sorted(indices) and len(set(indices)) == len(indices)
        starts = [s.start for s in ep.sessions if s.start is not None]
        assert starts == sorted(starts), "simulated time must not run backwards"
        turn_ids = [t.turn_id for t in ep.turns()]
        assert len(turn_ids) == len(set(turn_ids)), "turn ids must be unique within an episode"
        for qa in ep.qa:
            assert 1 <= qa.after_session <= max(indices)
            assert set(qa.evidence) <= set(turn_ids)


def test_unknown_dataset_suggests_a_name(fixtures_dir):
    with pytest.raises(KeyError, match="lufy"):
        load("lufyy", fixtures_dir)
