"""LUFY weight fit (sec. 3.4, Table 2): Levenberg-Marquardt on e^(-1/S) against labels."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import numpy as np
import pytest

from recallbench.datasets import load
from recallbench.embed import HashingEmbedder
from recallbench.llm import build_llm
from recallbench.memory.lufy import EMOBANK_RELPATH, Lufy
from recallbench.memory.naive_rag import NaiveRAG
from recallbench.papers.lufy.fit import (
    PairTable,
    calibrate,
    collect_pairs,
    fit_two_stage,
    fit_weights,
    predicted_importance,
)

ROOT = Path(__file__).resolve().parents[1]
TRUE = {"A": 2.76, "P": -0.28, "L": 0.44}


def _synthetic(n: int, seed: int, noise: float = 0.0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, size=(n, 3))
    y = predicted_importance(x, np.array(list(TRUE.values())))
    return x, np.clip(y + rng.normal(0, noise, n), 0, 1) if noise else y


def test_recovers_known_weights():
    x, y = _synthetic(300, 0)
    fit = fit_weights(x, y, list(TRUE), l2=0.0)
    assert fit.success and fit.n == 300
    assert fit.weights == pytest.approx(TRUE, abs=1e-4)
    noisy_x, noisy_y = _synthetic(2000, 1, noise=0.02)
    noisy = fit_weights(noisy_x, noisy_y, list(TRUE), l2=1e-4)
    assert noisy.weights == pytest.approx(TRUE, abs=0.15)
    # the L2 penalty shrinks the weights
    shrunk = fit_weights(x, y, list(TRUE), l2=10.0)
    assert sum(abs(v) for v in shrunk.weights.values()) < sum(abs(v) for v in TRUE.values())


def test_two_stage_recovers_retrieval_weights():
    rng = np.random.default_rng(2)
    n = 400
    table = PairTable([f"p{i}" for i in range(n)])
    raw = {
        "A": rng.uniform(1, 5, n),
        "P": rng.uniform(1, 160, n),
        "L": rng.uniform(1, 10, n),
        "R1": rng.integers(0, 5, n).astype(float),
        "R2": rng.integers(0, 5, n).astype(float),
    }
    table.raw = {k: list(v) for k, v in raw.items()}
    bounds = {"A": (1, 5), "P": (1, 160), "L": (1, 10), "R1": (0, 4), "R2": (0, 4)}
    truth = TRUE | {"R1": 1.02, "R2": -0.3}
    x = table.matrix(list(truth), bounds)
    table.target = list(predicted_importance(x, np.array(list(truth.values()))))
    # stage 1 data carry no retrieval counts (the paper's CANDOR pairs)
    stage1 = PairTable(list(table.ids), table.raw | {"R1": [0.0] * n, "R2": [0.0] * n})
    x1 = stage1.matrix(list(truth), bounds)
    stage1.target = list(predicted_importance(x1, np.array(list(truth.values()))))
    result = fit_two_stage(stage1, table, bounds, l2=0.0)
    assert result["weights"] == pytest.approx(truth, abs=1e-3)
    assert result["paper"]["R2"] == -0.012 and result["n_stage2"] == n


def test_bad_shapes():
    with pytest.raises(ValueError, match="do not match"):
        fit_weights(np.ones((5, 2)), np.ones(5), ["A", "P", "L"])
    with pytest.raises(ValueError, match="at least 3"):
        fit_weights(np.ones((2, 3)), np.ones(2), ["A", "P", "L"])


def test_calibrate_min_max():
    table = PairTable(["a", "b", "c"])
    table.raw = {
        "A": [2.0, 3.0, 4.0],
        "P": [5.0, 5.0, 5.0],
        "L": [],
        "R1": [0, 2, 1],
        "R2": [0] * 3,
    }
    bounds = calibrate(table, ["A", "P", "R1"])
    assert bounds == {"A": (2.0, 4.0), "P": (5.0, 6.0), "R1": (0.0, 2.0)}
    assert table.matrix(["A", "R1"], bounds).tolist() == [[0, 0], [0.5, 1], [1, 0.5]]


def test_collect_pairs_on_fixture(fixtures_dir):
    llm = build_llm({"backend": "extractive"}, cache_path=None)
    emb = HashingEmbedder(dim=256)
    lufy = Lufy(llm, emb, surprise="unigram", emobank_path=str(fixtures_dir / EMOBANK_RELPATH))
    episodes = load("lufy", fixtures_dir)
    table = collect_pairs(episodes, lufy, NaiveRAG(llm, emb, threshold=0.3))
    labelled = [t for ep in episodes for t in ep.turns() if t.labels.get("importance")]
    assert len(table) == len([t for t in labelled if t.text.strip()]) > 0
    assert all(0 <= y <= 1 for y in table.target)
    assert all(1 <= a <= 5 for a in table.raw["A"]) and all(1 <= v <= 10 for v in table.raw["L"])
    assert all(float(r).is_integer() for r in table.raw["R1"] + table.raw["R2"])
    sample = collect_pairs(episodes, lufy, NaiveRAG(llm, emb), max_pairs=2, seed=1)
    assert len(sample) == 2 and set(sample.ids) <= set(table.ids)


def test_script_prints_ours_beside_paper(fixtures_dir, tmp_path, capsys):
    main = runpy.run_path(str(ROOT / "scripts" / "fit_lufy_weights.py"))["main"]
    out = tmp_path / "fit.json"
    argv = [
        "--data-dir",
        str(fixtures_dir),
        "--embedder",
        "hashing",
        "--surprise",
        "unigram",
        "--threshold",
        "0.3",
        "--cache-dir",
        str(tmp_path),
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "ours" in printed and "paper" in printed and "2.760" in printed
    result = json.loads(out.read_text())
    assert set(result["weights"]) == {"A", "P", "L", "R1", "R2"}
    assert result["setup"]["surprise"] == "unigram"
