"""Render a LUFY table (or Fig. 11) from its experiment's runs or from the LUFY logs.

    python scripts/lufy_tables.py lufy_table11                  # runs of `recallbench -m experiment=lufy_table11`
    python scripts/lufy_tables.py lufy_table10                  # logs only (VADER)
    python scripts/lufy_tables.py lufy_table8 judge.generator='{backend: openai, model: gpt-4o}'

Extra arguments are Hydra overrides of the experiment's config (paths, judge, generator ...);
paths come from RECALLBENCH_DATA_DIR / RECALLBENCH_RESULTS_DIR as in every recallbench run.
Writes results/tables/lufy_table<n>.{md,tex,csv} (and results/figures/<figure>.png).
"""

from __future__ import annotations

import sys
from pathlib import Path

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from recallbench.cli import CONF_DIR
from recallbench.papers.lufy.runs import load_spec
from recallbench.papers.lufy.tables import reproduce_from_runs, reproduce_weights
from recallbench.papers.lufy.ux import reproduce_ux


def compose_experiment(experiment: str, overrides: list[str]):
    """Compose ``config.yaml`` with ``experiment=<experiment>`` and the overrides."""
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=[f"experiment={experiment}", *overrides])


def main(argv: list[str]) -> None:
    if not argv or argv[0].startswith("-"):
        sys.exit(__doc__)
    experiment, overrides = argv[0], argv[1:]
    spec = load_spec(experiment)
    cfg = compose_experiment(experiment, overrides)
    results = cfg.paths.results_dir
    if spec["kind"] in ("sentiment", "rating"):
        judge, samples, temperature = None, 1, 0.0
        if spec["kind"] == "rating":
            from recallbench.judges import build_judge
            from recallbench.llm import build_llm

            judge_cfg = OmegaConf.to_container(cfg.judge, resolve=True)
            samples = int(judge_cfg.get("rating_samples") or 1)
            temperature = float(judge_cfg.get("rating_temperature") or 0.0)
            cache = Path(cfg.paths.cache_dir) / "llm.sqlite"
            run_llm = build_llm(OmegaConf.to_container(cfg.generator, resolve=True), cache)
            judge = build_judge(judge_cfg, llm=run_llm)
        paths = reproduce_ux(
            spec,
            data_dir=cfg.dataset.data_dir,
            results_dir=results,
            judge=judge,
            samples=samples,
            temperature=temperature,
        )
    elif spec["kind"] == "weights":
        paths = reproduce_weights(spec, results)
    else:
        paths = reproduce_from_runs(spec, results)
    for path in paths.values():
        print(path)


if __name__ == "__main__":
    main(sys.argv[1:])
