"""Every reported value of every protocol's summary.json lies inside its clustered bootstrap CI.

Runs each protocol on the fixtures through ``cli.run`` (extractive generator, lexical judge,
hashing embedder) and walks the summaries: a value with an interval must lie inside it (corpus
BLEU included: the interval is of the corpus value, not of sentence scores); a value without one
must say why (``ci_note``); the interval records its method, resamples, seed and clusters.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hydra import compose, initialize_config_dir

from recallbench.cli import CONF_DIR, run

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "fixtures"
JOBS = {
    "response": ["dataset=msc", "memory=memory_retrieval", "metrics=lexical"],
    "response_cc": ["dataset=cc", "memory=full_history", "metrics=lexical"],
    "qa_lufy": ["dataset=lufy", "memory=naive_rag", "protocol=qa_lufy", "+judge=lexical"],
    "qa_gvd": [
        "dataset=gvd",
        "memory=memorybank_gvd",
        "protocol=qa_gvd",
        "+judge=lexical",
        f"dataset.options.answer_key={FIXTURES / 'gvd' / 'answer_key_en.jsonl'}",
    ],
    "teafarm": ["dataset=msc", "memory=memory_retrieval", "protocol=teafarm"],
}


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("results")


@pytest.fixture(scope="module")
def summaries(results) -> dict[str, dict]:
    tmp = results
    out = {}
    for job, overrides in JOBS.items():
        with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
            cfg = compose(
                "config",
                overrides=[
                    f"paths.results_dir={tmp}",
                    f"dataset.data_dir={FIXTURES}",
                    "embedder=hashing",
                    "generator=extractive",
                    "progress=false",
                    "wandb.mode=disabled",
                    *overrides,
                ],
            )
        run_dir = run(cfg, job, {})
        out[job] = json.loads((run_dir / "summary.json").read_text())
    return out


def valued(node: Any, path: str = "") -> Iterator[tuple[str, dict]]:
    """Yield every dict in the summary that reports a ``value``, with its path."""
    if isinstance(node, dict):
        if "value" in node and isinstance(node["value"], int | float):
            yield path, node
        for key, child in node.items():
            if key != "bootstrap":
                yield from valued(child, f"{path}/{key}")


@pytest.mark.parametrize("job", list(JOBS))
def test_every_value_lies_inside_its_interval(summaries, job):
    checked = 0
    for path, entry in valued(summaries[job]["metrics"]):
        for value_key, ci_key in (("value", "ci95"), ("session_mean", "session_mean_ci95")):
            if value_key not in entry:
                continue
            assert ci_key in entry, f"{job}{path}: {value_key} without {ci_key}"
            ci = entry[ci_key]
            if ci is None:
                assert entry.get("ci_note") or value_key == "session_mean", f"{job}{path}"
                continue
            low, high = ci
            assert low - 1e-12 <= entry[value_key] <= high + 1e-12, (
                job,
                path,
                entry[value_key],
                ci,
            )
            checked += 1
    assert checked >= 3, f"{job}: only {checked} intervals"


@pytest.mark.parametrize("job", list(JOBS))
def test_intervals_record_their_settings(summaries, job):
    metrics = summaries[job]["metrics"]
    top = [e for e in metrics.values() if e.get("ci95") is not None]
    assert top, job
    for entry in top:
        assert "episode-clustered" in entry["ci_method"]
        assert entry["n_resamples"] > 0 and isinstance(entry["seed"], int)
        assert entry["n_clusters"] >= 2


def test_corpus_bleu_interval_is_of_the_corpus_value(summaries):
    bleu = summaries["response"]["metrics"]["bleu4"]
    low, high = bleu["ci95"]
    assert low <= bleu["value"] <= high
    # The stored per-episode statistics reproduce the corpus value exactly.
    from recallbench.metrics.bootstrap import statistic_from_entry

    assert statistic_from_entry(bleu).value() == pytest.approx(bleu["value"], abs=1e-12)


def test_distinct_says_why_it_has_no_interval(summaries):
    distinct = summaries["response"]["metrics"]["distinct2"]
    assert distinct["ci95"] is None and "unique n-grams" in distinct["ci_note"]


def test_frames_carry_the_intervals(summaries, results):
    from recallbench.analysis import find_runs, load_summaries

    frame = load_summaries(find_runs(results))
    with_ci = frame.dropna(subset=["ci_low", "ci_high"])
    assert len(with_ci) > 20
    assert (
        (with_ci.ci_low <= with_ci.value + 1e-12) & (with_ci.value <= with_ci.ci_high + 1e-12)
    ).all()
