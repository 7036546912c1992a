"""LongMemEval's dataset-statistics table on the fixtures (papers/longmemeval/dataset_table.py)."""

from __future__ import annotations

import pytest

from recallbench.datasets.longmemeval import load
from recallbench.papers.longmemeval.dataset_table import variant_stats


def test_variant_stats_on_the_fixtures(fixtures_dir):
    oracle = variant_stats(load(fixtures_dir, "oracle"))
    assert oracle["questions"] == 4 and oracle["abstention"] == 1
    assert oracle["type:multi-session"] == 1 and oracle["type:temporal-reasoning"] == 0
    assert (oracle["sessions_min"], oracle["sessions_max"]) == (1, 2)
    assert oracle["sessions_mean"] == pytest.approx(5 / 4)
    assert oracle["turns_mean"] == pytest.approx((4 + 6 + 4 + 4) / 4)
    # answer_fx0b1 appears in two histories: counted once
    assert oracle["distinct_sessions"] == 4 and oracle["missing"] == 0
    s = variant_stats(load(fixtures_dir, "s"))
    # the S fixture lacks two oracle questions; a filler session recurs in both histories
    assert s["questions"] == 2 and s["missing"] == 2
    assert s["distinct_sessions"] == 6
