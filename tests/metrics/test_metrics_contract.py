"""One parametrized contract over every metric in METRICS: types, ranges, totality, max."""

from __future__ import annotations

import json
import math

import pytest

from recallbench.metrics import METRICS, Metric, MetricResult, get_metric

NEEDS_HUB = {"bertscore_roberta_large", "mauve_gpt2_large"}
OFFLINE = sorted(set(METRICS) - NEEDS_HUB)

PREDS = [
    "I went hiking with my sister in the mountains last weekend.",
    "My knee still hurts, so the doctor told me to rest for a week.",
    "We are planning a small party for my father's seventieth birthday.",
]
REFS = [
    "Last weekend my sister and I went hiking up in the mountains.",
    "The doctor said I should rest my sore knee for about a week.",
    "Everyone is coming over to celebrate my dad turning seventy.",
]


def check(metric: Metric, result: MetricResult, n: int) -> None:
    assert isinstance(result, MetricResult) and isinstance(result.value, float)
    assert isinstance(result.meta, dict)
    low, high = metric.bounds
    assert low <= result.value <= high, result.value
    if result.items is not None:
        assert len(result.items) == n
        assert all(isinstance(v, float) and low <= v <= high for v in result.items)
    json.dumps(result.to_dict(), allow_nan=False)


def test_registry_has_the_documented_names():
    assert set(METRICS) >= {
        "bleu1",
        "bleu2",
        "bleu4",
        "sbleu1",
        "sbleu2",
        "sbleu4",
        "rouge_l",
        "token_f1",
        "distinct1",
        "distinct2",
        "bertscore",
        "mauve",
        "perplexity",
    }
    assert all(m.name == name for name, m in METRICS.items())
    assert all(m.description.strip() for m in METRICS.values())


def test_get_metric_did_you_mean():
    assert get_metric("rouge_l") is METRICS["rouge_l"]
    with pytest.raises(KeyError, match="Did you mean 'rouge_l'"):
        get_metric("rougeL")


@pytest.mark.parametrize("name", sorted(METRICS))
def test_empty_input_scores_zero(name):
    metric = METRICS[name]
    result = metric.compute([], [])
    check(metric, result, 0)
    assert result.value == 0.0


@pytest.mark.parametrize("name", OFFLINE)
def test_types_and_ranges(name):
    metric = METRICS[name]
    check(metric, metric.compute(PREDS, REFS), len(PREDS))


@pytest.mark.parametrize("name", OFFLINE)
def test_empty_predictions_score_zero(name):
    metric = METRICS[name]
    result = metric.compute(["", "  "], REFS[:2])
    check(metric, result, 2)
    if metric.higher_is_better:
        assert result.value == 0.0
        assert result.items is None or result.items == [0.0, 0.0]


@pytest.mark.parametrize("name", [n for n in OFFLINE if METRICS[n].identical_is_max])
def test_identical_input_gives_max(name):
    metric = METRICS[name]
    result = metric.compute(PREDS, PREDS)
    assert math.isclose(result.value, metric.bounds[1], abs_tol=1e-4), result.value
    if result.items is not None:  # corpus MAUVE on 3 samples cannot tell them apart
        assert metric.compute(PREDS, REFS).value < result.value


@pytest.mark.parametrize("name", OFFLINE)
def test_misaligned_input_is_rejected(name):
    with pytest.raises(ValueError, match="2 predictions but 3 references"):
        METRICS[name].compute(PREDS[:2], REFS)
    with pytest.raises(TypeError, match="not str"):
        METRICS[name].compute("a prediction", "a reference")
    with pytest.raises(TypeError, match="reference 0 must be a str"):
        METRICS[name].compute(["a prediction"], [None])


def _cached(repo: str) -> bool:
    from huggingface_hub import try_to_load_from_cache

    return isinstance(try_to_load_from_cache(repo, "config.json"), str)


@pytest.mark.parametrize("name", sorted(NEEDS_HUB))
def test_hub_metrics_fail_clearly_offline(name):
    if _cached("roberta-large" if "roberta" in name else "gpt2-large"):
        pytest.skip("the Hub model is in the local HF cache: it would load, not fail")
    with pytest.raises(RuntimeError, match="Hub"):
        METRICS[name].compute(PREDS[:1], REFS[:1])
