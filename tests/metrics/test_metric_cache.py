"""Metric results computed from predictions are cached by what decides them (issue 38)."""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pytest

from recallbench.metrics import METRICS, MetricResult
from recallbench.metrics.base import Metric, Reference, check_inputs
from recallbench.metrics.cache import MetricCache, cached_compute, identity, use_metric_cache
from recallbench.metrics.mauve import MauveMetric
from recallbench.metrics.scoring import score_predictions
from recallbench.records import Prediction


class LengthRatio(Metric):
    """Mean of len(prediction) / len(reference) * scale; counts its computations."""

    name = "length_ratio"
    cache_results = True
    bounds = (0.0, float("inf"))

    def __init__(self, scale: float = 1.0, as_array: bool = True) -> None:
        self.scale = scale
        self.as_array = as_array
        self._calls = 0

    def compute(self, predictions: Sequence[str], references: Sequence[Reference]) -> MetricResult:
        self._calls += 1
        preds, refs = check_inputs(self.name, predictions, references)
        items = [self.scale * len(p) / max(1, len(r[0])) for p, r in zip(preds, refs, strict=True)]
        stats = [[v, 1] for v in items]
        spec = {"fn": "ratio"}
        value = sum(items) / len(items) if items else 0.0
        return MetricResult(
            value, items, {"n": len(items)}, np.asarray(stats) if self.as_array else stats, spec
        )


@pytest.fixture
def cache(tmp_path):
    found = use_metric_cache(tmp_path / "metric_results.sqlite")
    yield found
    use_metric_cache(None)


def test_a_result_comes_back_from_the_cache_as_computed(cache):
    for as_array in (True, False):
        metric = LengthRatio(as_array=as_array)
        first = cached_compute(metric, ["ab", "abc"], ["abcd", "a"])
        again = cached_compute(LengthRatio(as_array=as_array), ["ab", "abc"], ["abcd", "a"])
        assert metric._calls == 1
        assert (again.value, again.items, again.meta, again.estimator) == (
            first.value,
            first.items,
            first.meta,
            first.estimator,
        )
        assert again.value == pytest.approx((0.5 + 3.0) / 2)
        if as_array:  # an array comes back with its dtype and shape
            assert isinstance(again.stats, np.ndarray) and again.stats.dtype == first.stats.dtype
            assert again.stats.tolist() == first.stats.tolist()
        else:  # a list as a list: ints stay ints (summary.json keeps its numbers' types)
            assert again.stats == [[0.5, 1], [3.0, 1]]
    assert len(cache) == 2  # array and list results differ by the as_array setting


def test_a_mostly_zero_array_is_stored_by_its_non_zeros_and_comes_back_equal():
    """MAUVE's per-item bucket counts (1-2 non-zeros per seed in 2 x buckets columns)."""
    from recallbench.metrics.cache import _dump, _load

    stats = np.zeros((50, 200))
    stats[np.arange(50), np.arange(50) * 3 % 200] = 1.0
    stats[7, 199] = 2.0
    result = MetricResult(0.5, None, {"seed_values": [0.4, 0.6]}, stats, {"fn": "mauve"})
    stored = _dump(result)
    assert '"at"' in json.dumps(stored) and len(json.dumps(stored)) < 2000  # not 10,000 zeros
    back = _load(stored)
    assert back.stats.dtype == stats.dtype and back.stats.shape == stats.shape
    assert np.array_equal(back.stats, stats) and back.meta == result.meta
    dense = np.ones((3, 4), dtype=np.int64)
    assert np.array_equal(_load(_dump(MetricResult(1.0, None, {}, dense))).stats, dense)


def test_settings_inputs_and_package_versions_decide_the_key(cache, tmp_path):
    metric = LengthRatio()
    cached_compute(metric, ["ab"], ["abcd"])
    cached_compute(metric, ["ab"], ["abcd"])
    cached_compute(metric, ["abc"], ["abcd"])  # another prediction
    cached_compute(metric, ["ab"], ["abcde"])  # another reference
    assert metric._calls == 3
    scaled = LengthRatio(scale=2.0)  # another setting
    assert cached_compute(scaled, ["ab"], ["abcd"]).value == 1.0 and scaled._calls == 1
    # the same inputs read back by a new cache object on the same file (another process)
    other = MetricCache(tmp_path / "metric_results.sqlite")
    assert len(other) == 4
    ident = identity(MauveMetric(seed=3))
    assert ident is not None and ident["settings"]["seed"] == 3
    assert ident["packages"]["mauve-text"] and ident["packages"]["faiss-cpu"]
    assert identity(MauveMetric(seed=3)) != identity(MauveMetric(seed=4))


PLUGIN = """
from recallbench.metrics.base import Metric, MetricResult, check_inputs
from recallbench.metrics.mauve import auto_buckets

CALLS = []


class Chars(Metric):
    name = "chars"
    cache_results = True

    def compute(self, predictions, references):
        CALLS.append(len(predictions))
        preds, _ = check_inputs(self.name, predictions, references)
        return MetricResult(float(sum(len(p) for p in preds) * SCALE), None, {})


SCALE = 1
"""


def test_an_edited_metric_source_misses_the_cache(cache, tmp_path, monkeypatch):
    import importlib
    import os

    from recallbench.metrics.cache import code_modules

    package = tmp_path / "plugin_chars_metric"
    package.mkdir()
    (package / "__init__.py").write_text("")
    source = package / "chars.py"
    source.write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("plugin_chars_metric.chars")
    metric = module.Chars()
    # its own module, its base class's and those it imports names from (recallbench.metrics.mauve)
    assert {"plugin_chars_metric.chars", "recallbench.metrics.base"} <= set(code_modules(metric))
    assert "recallbench.metrics.mauve" in code_modules(metric)
    assert "numpy" not in code_modules(MauveMetric())  # third-party code: keyed by version
    assert "recallbench.embed.minilm" in code_modules(MauveMetric())  # cache_modules
    assert cached_compute(metric, ["ab"], ["c"]).value == 2.0
    assert cached_compute(module.Chars(), ["ab"], ["c"]).value == 2.0
    assert module.CALLS == [1]  # the second was looked up
    # the metric's code changes (SCALE 1 -> 10): the same inputs are computed by the new code
    source.write_text(PLUGIN.replace("SCALE = 1", "SCALE = 10"))
    os.utime(source, ns=(source.stat().st_atime_ns, source.stat().st_mtime_ns + 10**9))
    module = importlib.reload(module)
    assert cached_compute(module.Chars(), ["ab"], ["c"]).value == 20.0
    assert module.CALLS == [1]  # reloaded: its list is new, and holds this computation
    assert len(cache) == 2


def test_a_metric_built_on_an_object_is_not_cached(cache):
    from recallbench.embed.hashing import HashingEmbedder

    assert identity(MauveMetric(HashingEmbedder())) is None
    assert identity(METRICS["bleu4"]) is None  # cheap metrics are computed, not looked up

    class Injected(LengthRatio):
        def __init__(self) -> None:
            super().__init__()
            self.model = object()

    metric = Injected()
    cached_compute(metric, ["ab"], ["abcd"])
    cached_compute(metric, ["ab"], ["abcd"])
    assert metric._calls == 2 and len(cache) == 0


def test_a_rescored_run_has_the_same_summary_and_computes_nothing(cache, monkeypatch):
    metric = LengthRatio()
    monkeypatch.setitem(METRICS, "length_ratio", metric)
    preds = [
        Prediction(f"e{e}-s{s}", f"e{e}", s, "response", "h", "x" * (e + s + 1), "y" * (2 + e))
        for e in range(3)
        for s in (1, 2)
    ]
    use_metric_cache(None)
    plain = score_predictions(preds, ["length_ratio"])
    calls = metric._calls  # overall + one per session
    assert calls == 3
    use_metric_cache(cache.path)
    first = score_predictions(preds, ["length_ratio"])
    again = score_predictions(preds, ["length_ratio"])
    assert metric._calls == 2 * calls  # the cached pass computed, the second looked up
    assert first == again == plain


def test_with_a_server_store_results_live_on_the_server_for_every_process(redis_server, tmp_path):
    """A job on another machine reads what this one scored: two caches over one real
    redis-server (no SQLite file is written)."""
    from recallbench.store import open_store

    one = open_store(redis_server.url, tmp_path / "a")
    two = open_store(redis_server.url, tmp_path / "b")
    try:
        metric = LengthRatio()
        stats = np.zeros((3, 40))
        stats[0, 1] = stats[2, 39] = 1.0
        result = MetricResult(0.75, [0.5, 1.0, 0.75], {"n": 3}, stats, {"fn": "ratio"})
        writer = MetricCache(tmp_path / "a" / "metric_results.sqlite", store=one)
        writer.put("k1", metric.name, {"metric": metric.name}, result)
        reader = MetricCache(tmp_path / "b" / "metric_results.sqlite", store=two)
        back = reader.get("k1")
        assert back is not None and back.value == 0.75 and back.items == [0.5, 1.0, 0.75]
        assert np.array_equal(back.stats, stats) and len(reader) == 1
        assert reader.get("absent") is None
        assert not (tmp_path / "a" / "metric_results.sqlite").exists()
    finally:
        one.close()
        two.close()
