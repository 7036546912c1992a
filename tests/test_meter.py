"""recallbench.meter: exclusive activity time and grouped counters, per run."""

from __future__ import annotations

import threading
import time

import pytest

from recallbench import meter


def test_meter_time_is_exclusive_and_counters_are_grouped():
    before = meter.snapshot()
    with meter.timed("metrics"):
        time.sleep(0.05)
        with meter.timed("lm_scoring"):
            time.sleep(0.1)
        meter.count("lm_scores.disk_hits", 3)
    got = meter.delta(before)
    assert got["seconds"]["lm_scoring"] == pytest.approx(0.1, abs=0.05)
    assert got["seconds"]["metrics"] == pytest.approx(0.05, abs=0.04)  # paused while nested
    assert got["lm_scores"]["disk_hits"] == 3
    assert not any(v for k, v in got["lm_scores"].items() if k != "disk_hits")
    assert set(got["seconds"]) >= set(meter.ACTIVITIES)


def test_threads_time_their_own_activities():
    before = meter.snapshot()

    def work() -> None:
        with meter.timed("embeddings"):
            time.sleep(0.1)

    threads = [threading.Thread(target=work) for _ in range(2)]
    with meter.timed("llm_calls"):
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    got = meter.delta(before)["seconds"]
    assert got["embeddings"] == pytest.approx(0.2, abs=0.08)  # two threads, 0.1 s each
    assert got["llm_calls"] == pytest.approx(0.1, abs=0.08)  # not paused by other threads
