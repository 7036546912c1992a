"""A rerun of LUFY (real SmolLM2 surprise) finds every LM score in the cache: no forward pass,
the same memories, and usage.json says so."""

from __future__ import annotations

import json

from recallbench.cli import compose_job, run
from recallbench.llm import lm_scores
from recallbench.records import Prediction, read_jsonl


def _lufy(fixtures_dir, results, tmp_path, tag: str):
    cfg, choices = compose_job(
        [
            "experiment=lufy_table11",
            "lufy_pair=lufy",
            f"paths.data_dir={fixtures_dir}",
            f"paths.results_dir={results}",
            f"memory.arousal_cache_dir={tmp_path}/models",
            "embedder=hashing",
            "progress=false",
            "wandb.mode=disabled",
            f"tag={tag}",
        ]
    )
    return run(cfg, cfg.job, choices)


def test_second_run_scores_nothing_and_keeps_every_value(fixtures_dir, tmp_path):
    results = tmp_path / "results"
    try:
        lm_scores.clear_memory()  # scores of other tests in this process must not count
        first = _lufy(fixtures_dir, results, tmp_path, "cold")
        lm_scores.clear_memory()  # as a new process: only the disk cache remains
        second = _lufy(fixtures_dir, results, tmp_path, "warm")
    finally:
        lm_scores.use_score_cache(None)
    cold = json.loads((first / "usage.json").read_text())["compute"]
    warm = json.loads((second / "usage.json").read_text())["compute"]
    assert (results / "cache" / "lm_scores.sqlite").is_file()
    assert cold["lm_scores"]["computed"] > 10 and cold["lm_scores"]["passes"] >= 1
    # the episode prefetch computes every pair once; score_session then finds each in memory
    assert cold["lm_scores"]["memory_hits"] == cold["lm_scores"]["computed"]
    assert cold["lm_scores"]["requested"] == 2 * cold["lm_scores"]["computed"]
    assert warm["lm_scores"]["disk_hits"] == cold["lm_scores"]["computed"]
    assert warm["lm_scores"]["computed"] == warm["lm_scores"]["passes"] == 0
    assert cold["seconds"]["lm_scoring"] > 0 and set(cold["seconds"]) >= {"metrics", "llm_calls"}
    assert warm["embeddings"]["memory_hits"] + warm["embeddings"]["misses"] > 0
    for name in sorted(p.name for p in (first / "memory").glob("*.jsonl")):
        assert (first / "memory" / name).read_text() == (second / "memory" / name).read_text()
    outputs = [read_jsonl(d / "predictions.jsonl", Prediction) for d in (first, second)]
    assert [p.output for p in outputs[0]] == [p.output for p in outputs[1]]
