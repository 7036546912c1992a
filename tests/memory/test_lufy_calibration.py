"""LUFY's retrieval threshold and alpha follow each embedder's cosine scale (sec. 4.1.1, Eq. 5).

- alpha: derived so that importance moves the ranking by the same fraction of the band of
  retrieved cosines as the paper's alpha = 0.1 does in ada-002's band [0.8, 0.9].
- threshold: every embedder config declares its cosine scale, and ``conf/memory/_cosine_cut.yaml``
  a calibrated cut-off and band top per scale, checked against
  the LUFY dataset for the embedders that run offline (real data; the fixtures are too small to
  calibrate anything; MiniLM's check takes ~30 s: marked slow) and refused when uncalibrated.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from omegaconf import OmegaConf

from recallbench import CONF_DIR
from recallbench.errors import ConfigError
from recallbench.memory.lufy import PAPER_ALPHA, PAPER_BAND, derive_alpha
from recallbench.papers.lufy.calibration import RATE_RANGE, cosine_profile

EMBEDDERS = sorted(p.stem for p in (CONF_DIR / "embedder").glob("*.yaml"))
OFFLINE = {"hashing", "minilm"}
FIXTURE_EMOBANK = Path(__file__).parents[2] / "data/fixtures/lufy/Code/roberta/emobank.csv"
USERS = ("Alexander", "Ava", "Benjamin", "Ella", "Emily")  # 5 of the 17 LUFY users


CUT = OmegaConf.to_container(OmegaConf.load(CONF_DIR / "memory" / "_cosine_cut.yaml"))


def embedder_cfg(stem: str) -> dict:
    return OmegaConf.to_container(OmegaConf.load(CONF_DIR / "embedder" / f"{stem}.yaml"))


def declared(stem: str) -> tuple[float | None, float | None]:
    """(cut-off, band top) that the memory configs take for embedder ``stem``'s scale."""
    scale = embedder_cfg(stem)["scale"]
    return CUT["_threshold_by_scale"][scale], CUT["_cosine_top_by_scale"][scale]


def ranking(cosines, importance, alpha):
    """Eq. 5: indices ranked by cos + alpha * importance."""
    return list(np.argsort(-(np.asarray(cosines) + alpha * np.asarray(importance)), kind="stable"))


def test_paper_alpha_is_recovered():
    assert derive_alpha(*PAPER_BAND) == pytest.approx(PAPER_ALPHA)
    with pytest.raises(ConfigError, match="cosine_top > threshold"):
        derive_alpha(0.5, 0.5)


def test_importance_moves_ranking_as_in_the_paper_band():
    # Memory 0 is very important but barely above the threshold; memory 1 is unimportant with a
    # cosine lead of 80% of the band. In the paper's band importance wins: 0.8 + 0.1 > 0.88.
    paper = ranking([0.80, 0.88], [1.0, 0.0], PAPER_ALPHA)
    assert paper == [0, 1]
    # MiniLM's band [0.5, 0.67]: the same positions in the band, 0.5 and 0.636.
    minilm = [0.5, 0.5 + 0.8 * 0.17]
    assert ranking(minilm, [1.0, 0.0], PAPER_ALPHA) == [1, 0]  # the kept 0.1 mutes importance
    assert ranking(minilm, [1.0, 0.0], derive_alpha(0.5, 0.67)) == paper
    # In general the derived alpha makes rankings invariant to the band: random candidates at
    # the same relative positions rank identically in both bands.
    rng = np.random.default_rng(0)
    for _ in range(200):
        where, importance = rng.random(4), rng.random(4)
        assert ranking(0.8 + 0.1 * where, importance, PAPER_ALPHA) == ranking(
            0.5 + 0.17 * where, importance, derive_alpha(0.5, 0.67)
        )


@pytest.mark.parametrize("stem", EMBEDDERS)
def test_lufy_alpha_follows_the_embedder_config(stem, llm, embedder):
    from recallbench.cli import compose_job
    from recallbench.cli.build import build_memory_factory

    cfg, _ = compose_job(
        ["memory=lufy", f"embedder={stem}", f"memory.emobank_path={FIXTURE_EMOBANK}"]
        + ["memory.surprise=unigram"]
    )
    make = build_memory_factory(cfg.memory, llm, embedder)
    threshold, top = declared(stem)
    if threshold is None:
        with pytest.raises(ConfigError, match="no calibrated cut-off for its scale"):
            make()
        return
    method = make()
    assert method.threshold == threshold
    assert method.alpha == pytest.approx(0.1 * (top - threshold) / 0.1)


@pytest.mark.parametrize(
    "stem",
    [pytest.param(s, marks=pytest.mark.slow) if s == "minilm" else s for s in EMBEDDERS],
)
def test_threshold_is_calibrated_for_the_embedder(stem, real_data_dir, llm):
    """The declared cut-off retrieves for some replies and the declared band top is measured."""
    from recallbench.cli.build import build_embedder
    from recallbench.datasets import load

    cfg = embedder_cfg(stem)
    threshold, top = declared(stem)
    if threshold is None:
        assert top is None  # refused by LUFY (test above)
        return
    if stem not in OFFLINE and not os.environ.get(cfg.get("api_key_env", "OPENAI_API_KEY")):
        pytest.skip(f"{stem}: needs its API key to measure cosines")
    embedder = build_embedder(cfg)
    episodes = load("lufy", real_data_dir, system="Naive RAG", users=USERS)
    profile = cosine_profile(embedder, episodes, llm)
    rate = profile.retrieval_rate(threshold)
    assert RATE_RANGE[0] <= rate <= RATE_RANGE[1], (stem, threshold, rate)
    assert profile.band_top(threshold) == pytest.approx(top, abs=0.05), stem


def test_calibration_script_prints_rates_per_threshold(fixtures_dir, capsys):
    """``scripts/calibrate_cosine.py``: one line per threshold 0.30 .. 0.90, rates in [0, 1]."""
    import runpy

    script = Path(__file__).parents[2] / "scripts" / "calibrate_cosine.py"
    main = runpy.run_path(str(script))["main"]
    assert main(["hashing", "--data-dir", str(fixtures_dir)]) == 0
    head, *lines = capsys.readouterr().out.splitlines()
    assert head.startswith("hashing-256: ") and " replies " in head  # name-dim
    assert [line.split(":")[0] for line in lines] == [
        f"threshold {t / 100:.2f}" for t in range(30, 95, 5)
    ]
    rates = [float(line.split("retrieval rate ")[1].split(",")[0]) for line in lines]
    assert all(0 <= r <= 1 for r in rates) and rates == sorted(rates, reverse=True)
