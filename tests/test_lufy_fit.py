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
    replay_pairs,
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


class _CountingEmbedder(HashingEmbedder):
    """A hashing embedder that records every batch it embeds with the model."""

    def __init__(self) -> None:
        super().__init__(dim=256)
        self.model_batches: list[list[str]] = []

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        self.model_batches.append(list(texts))
        return super()._embed_batch(texts)


def test_replay_embeds_each_episode_in_one_batch(fixtures_dir):
    """The replay embeds an episode's texts in one batch up front, not two per session, and
    counts the same R1/R2 as a replay whose every vector comes from a per-text model call."""
    llm = build_llm({"backend": "extractive"}, cache_path=None)
    episodes = load("lufy", fixtures_dir)
    batched = _CountingEmbedder()
    pairs = replay_pairs(episodes, NaiveRAG(llm, batched, threshold=0.3))
    batches = batched.model_batches
    # one batch of the data's texts per episode; later only the summaries, one at a time
    assert sum(len(b) > 1 for b in batches) == len(episodes)
    assert all(len(b) == 1 and " talked about: " in b[0] for b in batches if len(b) == 1)
    questions = {qa.question for ep in episodes for qa in ep.qa}
    assert questions and not questions & {t for b in batches for t in b}

    class OneByOne(_CountingEmbedder):
        def _encode(self, texts):  # no batching at all: each text its own model call
            return np.concatenate([super(OneByOne, self)._encode([t]) for t in texts])

    assert replay_pairs(episodes, NaiveRAG(llm, OneByOne(), threshold=0.3)) == pairs


def test_script_reuses_the_runs_caches(fixtures_dir, tmp_path, capsys):
    """A second fit with the same --cache-dir embeds nothing and scores no surprise again: the
    vectors and LM scores come from ``embeddings.sqlite`` and ``lm_scores.sqlite``."""
    from recallbench import meter
    from recallbench.llm import lm_scores

    main = runpy.run_path(str(ROOT / "scripts" / "fit_lufy_weights.py"))["main"]
    argv = ["--data-dir", str(fixtures_dir), "--threshold", "0.3", "--cache-dir", str(tmp_path)]
    results = []
    for _ in range(2):
        lm_scores.clear_memory()  # a new process: only the disk caches remain
        before = meter.snapshot()
        assert main(argv) == 0
        used = meter.delta(before)
        results.append((capsys.readouterr().out, used["embeddings"], used["lm_scores"]))
    (first, emb1, lm1), (second, emb2, lm2) = results
    assert emb1["misses"] > 0 and lm1["computed"] > 0
    assert emb2.get("misses", 0) == 0 and emb2["disk_hits"] > 0
    assert lm2.get("computed", 0) == 0 and lm2["disk_hits"] == lm1["computed"]
    assert first == second
    assert {p.name for p in tmp_path.iterdir()} >= {"embeddings.sqlite", "lm_scores.sqlite"}
