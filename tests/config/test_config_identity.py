"""Configs that extend a base resolve to exactly what the full copies resolved to.

``expected_resolved.json`` holds, for every ``conf/memory`` choice (under two embedders, whose
scales the LUFY-family thresholds read) and every ``conf/experiment``, the sha256 of the fully
composed and resolved app config, recorded before the variants were rewritten as
``defaults: [<base>, _self_]`` plus the keys they change. A new config needs no entry: it is
checked to compose and resolve, and ``python tests/config/test_config_identity.py --record``
pins it when it should stop moving (it never rewrites an existing entry: an entry that moves is
a behaviour change and must be looked at, then deleted by hand). An experiment's ``reproduce:``
block (how make drives it: cli/reproduce.py; not part of a run's identity, ``run.record``) is
left out of the hash: the blocks moved there from the Makefile (issue 36) changed no config.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from recallbench import CONF_DIR

EXPECTED = Path(__file__).with_name("expected_resolved.json")
ENV = {
    "RECALLBENCH_DATA_DIR": "/data",
    "RECALLBENCH_RESULTS_DIR": "/results",
    "WANDB_MODE": "offline",
}
EMBEDDERS = ("minilm", "openai_ada_002")
# the memory choices; a `_`-prefixed file is a shared part that configs extend, not a choice
MEMORY = sorted(p for p in (CONF_DIR / "memory").glob("*.yaml") if not p.stem.startswith("_"))


def cases() -> list[tuple[str, list[str]]]:
    out = []
    for path in MEMORY:
        for emb in EMBEDDERS:
            out.append(
                (f"memory={path.stem},embedder={emb}", [f"memory={path.stem}", f"embedder={emb}"])
            )
    for path in sorted((CONF_DIR / "experiment").glob("*.yaml")):
        out.append((f"experiment={path.stem}", [f"experiment={path.stem}"]))
    return out


def resolved_hash(overrides: list[str]) -> str:
    from recallbench.cli import compose_job

    cfg, choices = compose_job(overrides)
    config = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(config, dict)
    config.pop("reproduce", None)
    data = {"config": config, "choices": choices}
    text = json.dumps(data, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@pytest.fixture(autouse=True)
def _fixed_env(monkeypatch):
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)


@pytest.mark.parametrize(("name", "overrides"), cases(), ids=[c[0] for c in cases()])
def test_composed_config_is_unchanged(name, overrides):
    expected = json.loads(EXPECTED.read_text())
    digest = resolved_hash(overrides)  # a new config must at least compose and resolve
    if name not in expected:
        return  # not pinned yet: `--record` pins it once it should stop moving
    assert digest == expected[name], f"{name} resolves to another config than recorded"


def test_every_recorded_config_still_exists():
    names = {name for name, _ in cases()}
    assert set(json.loads(EXPECTED.read_text())) <= names


@pytest.mark.parametrize("path", MEMORY, ids=lambda p: p.stem)
def test_load_group_config_composes_as_hydra_does(path):
    from recallbench.cli import compose_job
    from recallbench.testing.configs import load_group_config

    cfg, _ = compose_job([f"memory={path.stem}"])
    assert OmegaConf.to_container(load_group_config(path)) == OmegaConf.to_container(cfg.memory)


def test_variants_extend_their_base():
    """A variant lists only what it changes: no key equal to its base's (the point of extending)."""
    from recallbench.testing.configs import load_group_config

    extended = 0
    for path in MEMORY:
        own = OmegaConf.load(path)
        if "defaults" not in own:
            continue
        extended += 1
        base = load_group_config(path.with_name(f"{own.defaults[0]}.yaml"))
        same = [k for k in own if k != "defaults" and k in base and own[k] == base[k]]
        assert not same, f"{path.name} repeats its base's value for {same}"
    assert extended >= 20


if __name__ == "__main__" and sys.argv[1:] == ["--record"]:
    os.environ.update(ENV)
    have = json.loads(EXPECTED.read_text()) if EXPECTED.exists() else {}
    for name, overrides in cases():
        have.setdefault(name, resolved_hash(overrides))
    EXPECTED.write_text(json.dumps(have, indent=1, sort_keys=True) + "\n")
    print(f"{len(have)} entries in {EXPECTED}")
