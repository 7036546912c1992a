"""Command line entry point; the only module that imports Hydra's runtime.

    recallbench dataset=msc memory=memory_retrieval generator=extractive
    recallbench -m experiment=theanine_table1          # a table's sweep (Hydra multirun)

``cli`` resolves the config, builds plain objects (episodes, LLM, embedder, memory factory,
protocol) and hands them to ``Runner``; everything below receives plain values.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from recallbench import CONF_DIR


def select_episodes(episodes: list, n: int | None, seed: int) -> list:
    """Sample ``n`` episodes with a fixed seed (order kept); all when ``n`` is None."""
    if n is None or n >= len(episodes):
        return list(episodes)
    keep = set(random.Random(seed).sample(range(len(episodes)), n))
    return [ep for i, ep in enumerate(episodes) if i in keep]


def build_protocol(cfg: DictConfig):
    """Instantiate the protocol named by ``cfg.protocol.name`` with its settings."""
    from recallbench.protocols import build_protocol as _build

    return _build(OmegaConf.to_container(cfg.protocol, resolve=True), seed=int(cfg.seed))


def run(cfg: DictConfig, job: str, choices: dict[str, str] | None = None) -> Path:
    """Run one job described by a composed config; return its run folder.

    ``choices`` are the config-group choices (e.g. ``{"memory": "memory_retrieval"}``); tables
    find runs by them.
    """
    from hydra.utils import instantiate

    from recallbench.datasets import load
    from recallbench.embed import build_embedder
    from recallbench.llm import build_llm
    from recallbench.runner import Runner, default_stamp
    from recallbench.tracking import WandbLogger

    paths = cfg.paths
    options = OmegaConf.to_container(cfg.dataset.get("options") or {}, resolve=True)
    episodes = load(cfg.dataset.name, cfg.dataset.data_dir, **options)
    episodes = select_episodes(episodes, cfg.episodes, int(cfg.seed))
    cache = Path(paths.cache_dir) / "llm.sqlite"
    llm = build_llm(OmegaConf.to_container(cfg.generator, resolve=True), cache)
    emb_cfg = OmegaConf.to_container(cfg.embedder, resolve=True)
    if emb_cfg.get("kind") != "hashing" and not emb_cfg.get("cache_path"):
        emb_cfg["cache_path"] = str(Path(paths.cache_dir) / "embeddings.sqlite")
    embedder = build_embedder(emb_cfg)
    protocol = build_protocol(cfg)
    metrics = list(cfg.metrics.names or cfg.protocol.get("metrics") or [])
    if cfg.resume_dir:
        run_dir = Path(cfg.resume_dir)
    else:
        run_dir = Path(paths.results_dir) / "runs" / cfg.tag / default_stamp() / job
    config: dict[str, Any] = OmegaConf.to_container(cfg, resolve=True)
    config["job"] = job
    config["choices"] = dict(choices or {})
    runner = Runner(
        run_dir,
        protocol=protocol,
        make_method=lambda: instantiate(cfg.memory, llm=llm, embedder=embedder),
        llm=llm,
        metrics=metrics,
        config=config,
        progress=bool(cfg.progress),
        logger=WandbLogger(cfg.wandb.project, cfg.wandb.mode, tags=[cfg.tag]),
    )
    runner.run(episodes)
    return run_dir


def picked_choices(choices) -> dict[str, str]:
    """Keep the config-group choices a run is identified by (drop Hydra's own and unset ones)."""
    return {k: v for k, v in choices.items() if v is not None and not k.startswith("hydra")}


def compose_job(overrides: list[str]) -> tuple[DictConfig, dict[str, str]]:
    """Compose the app config without Hydra's runtime (tests, benches); return (cfg, choices)."""
    from hydra import compose, initialize_config_dir
    from omegaconf import open_dict

    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=overrides, return_hydra_config=True)
    choices = picked_choices(cfg.hydra.runtime.choices)
    with open_dict(cfg):
        del cfg["hydra"]
    return cfg, choices


def main() -> None:
    """Console entry point (Hydra app)."""
    import hydra
    from hydra.core.hydra_config import HydraConfig

    @hydra.main(config_path=str(CONF_DIR), config_name="config", version_base="1.3")
    def _app(cfg: DictConfig) -> None:
        choices = HydraConfig.get().runtime.choices
        job = cfg.job or f"{cfg.dataset.name}-{choices['memory']}-{choices['generator']}"
        print(run(cfg, job, picked_choices(choices)))

    _app()


if __name__ == "__main__":
    main()
