"""Load one config-group file the way Hydra composes it, without Hydra (for tests).

A variant config extends its base with ``defaults: [<base>, _self_]`` (``docs/architecture.md``)
and lists only the keys it changes; ``OmegaConf.load`` on such a file sees the changed keys and
no ``_target_``. ``load_group_config`` follows the chain inside the file's folder and merges the
file over its base, as Hydra does for a defaults list of ``[<base>, _self_]``;
``tests/config/test_config_identity.py`` checks the result against Hydra's own composition.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

from omegaconf import DictConfig, ListConfig, OmegaConf

from recallbench.errors import ConfigError


def load_group_config(path: str | Path) -> DictConfig:
    """Return the group config at ``path`` merged over the bases its ``defaults`` name."""
    path = Path(path)
    cfg = OmegaConf.load(path)
    if not isinstance(cfg, DictConfig):
        raise ConfigError(f"{path}: a group config is a mapping, got a list")
    if "defaults" not in cfg:
        return cfg
    defaults = list(cfg.pop("defaults"))
    if not defaults or defaults[-1] != "_self_" or not all(isinstance(d, str) for d in defaults):
        raise ConfigError(
            f"{path}: defaults must be a list of base configs ending with _self_, got {defaults}"
        )
    merged: DictConfig | ListConfig = OmegaConf.create()
    for base in defaults[:-1]:
        merged = OmegaConf.merge(merged, load_group_config(path.with_name(f"{base}.yaml")))
    return cast(DictConfig, OmegaConf.merge(merged, cfg))  # mappings merge into a mapping
