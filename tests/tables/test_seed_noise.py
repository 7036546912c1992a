"""A value averaged over seeds (MAUVE's k-means) carries its spread into the table (issue 33).

Hand-checked: the digits a mean can carry, the pooled per-seed values of a cell that pools runs,
the ``±`` text and csv fields, and a summary entry's per-session and session-mean seed values.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from recallbench.tables.cell import Cell, cells_csv, format_cell, legend, noise_digits, seed_sd
from recallbench.tables.intervals import Found, pooled_seeds


def test_noise_digits_keep_the_last_unit_above_the_standard_error():
    # sd 1.0 over 10 seeds: se 0.316 -> unit 1 (0 decimals)
    assert noise_digits(2, 1.0, 10) == 0
    # sd 1.94 (1,085 MSC responses): se 0.61 -> unit 1
    assert noise_digits(2, 1.94, 10) == 0
    # sd 0.1 over 10 seeds: se 0.0316 -> unit 0.1
    assert noise_digits(2, 0.1, 10) == 1
    # sd 0.01: se 0.00316 -> unit 0.01, never more decimals than the metric's own
    assert noise_digits(2, 0.01, 10) == 2
    assert noise_digits(2, 1e-6, 10) == 2
    # sd 8 over 10 seeds: se 2.53 -> unit 10 (rounded to tens)
    assert noise_digits(2, 8.0, 10) == -1
    assert noise_digits(2, None, None) == 2 and noise_digits(2, 0.0, 10) == 2


def test_seed_sd_is_the_sample_standard_deviation():
    assert seed_sd([1.0, 2.0, 3.0]) == pytest.approx(1.0)
    assert seed_sd([0.5]) is None and seed_sd(None) is None


def test_a_pooled_cell_averages_each_seed_with_the_cells_weights():
    a = Found(0.5, 30, seeds=(0.4, 0.6))
    b = Found(0.8, 10, seeds=(0.9, 0.7))
    # seed 1: (0.4*30 + 0.9*10)/40 = 0.525; seed 2: (0.6*30 + 0.7*10)/40 = 0.625
    assert pooled_seeds([a, b]) == pytest.approx((0.525, 0.625))
    assert pooled_seeds([a, Found(0.8, 10)]) is None  # a run without seeds: no spread
    assert pooled_seeds([a, Found(0.8, 10, seeds=(0.9,))]) is None  # different seed counts
    assert pooled_seeds([a, Found(0.1, 0, seeds=(0.0, 0.0, 0.0))]) == (0.4, 0.6)  # n=0: no weight


def test_a_seeded_cell_prints_its_spread_and_only_the_digits_it_supports():
    cell = Cell("THEANINE", "MSC", "Mauve", 77.3612, 9.06, 120, 2, seed_sd=1.2, seeds=10)
    # se = 1.2 / sqrt(10) = 0.38 -> unit 1
    assert format_cell(cell) == "77 ±1.2 (9.06)"
    fine = Cell("THEANINE", "MSC", "Mauve", 77.3612, None, 120, 2, seed_sd=0.05, seeds=10)
    assert format_cell(fine).startswith("77.4 ±0.05")  # se = 0.016 -> unit 0.1
    assert "±s = standard deviation of ours over 10 seeds" in legend([cell])
    header, row = cells_csv([cell]).splitlines()
    assert header.endswith(",seed_sd,seeds") and row.endswith(",1.2,10")
    plain = Cell("x", "y", "Bleu-4", 1.5, None, 3)
    assert "±" not in format_cell(plain) and "seeds" not in legend([plain])


def test_summary_entries_keep_each_seed_per_session_and_for_the_session_mean():
    from recallbench.metrics.base import Metric, MetricResult
    from recallbench.metrics.scoring import _entry
    from recallbench.records import Prediction

    class Seeded(Metric):
        """A seed-averaged metric whose seed k gives len(outputs) + k (hand-checkable)."""

        name = "seeded"

        def compute(self, predictions, references):
            values = [len(predictions) + k for k in range(3)]
            meta = {"seed_values": values, "seed_sd": float(np.std(values, ddof=1))}
            return MetricResult(sum(values) / 3, None, meta)

    preds = [
        Prediction(f"p{i}", "e1", s, "response", f"h{i}", "out", reference="ref")
        for i, s in enumerate([3, 3, 4])
    ]
    entry, _ = _entry(Seeded(), preds)
    assert entry["seed_values"] == [3, 4, 5]
    assert entry["per_session"]["3"]["seed_values"] == [2, 3, 4]
    assert entry["per_session"]["4"]["seed_values"] == [1, 2, 3]
    assert entry["session_mean_seed_values"] == [1.5, 2.5, 3.5]
    assert math.isclose(entry["session_mean"], 2.5)
