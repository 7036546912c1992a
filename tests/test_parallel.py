"""``parallel.ordered_map``: input order, at most ``workers`` at once, bounded look-ahead, errors."""

from __future__ import annotations

import threading
import time

import pytest

from recallbench.parallel import ordered_map


class Probe:
    """Records how many calls run at once and how far ahead of the consumer items started."""

    def __init__(self, delays: dict[int, float] | None = None) -> None:
        self.delays = delays or {}
        self.running = self.most = 0
        self.started: list[int] = []
        self.lock = threading.Lock()
        self.together: threading.Barrier | None = None  # items 0-3 meet here: 4 run at once

    def __call__(self, x: int) -> int:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
            self.started.append(x)
        if self.together is not None and x < self.together.parties:
            self.together.wait()
        time.sleep(self.delays.get(x, 0.02))
        with self.lock:
            self.running -= 1
        return x * x


def test_results_come_in_input_order_with_at_most_workers_at_once():
    probe = Probe({0: 0.3})  # the first item is the slowest
    probe.together = threading.Barrier(4, timeout=30)  # the first 4 wait for each other
    got = list(ordered_map(probe, range(20), workers=4))
    assert got == [(x, x * x) for x in range(20)]
    assert probe.most == 4  # 4 ran at once (the barrier), never more


def test_one_worker_runs_in_the_callers_thread():
    seen = []
    got = list(ordered_map(lambda x: seen.append(threading.get_ident()) or x, [1, 2], workers=1))
    assert got == [(1, 1), (2, 2)] and set(seen) == {threading.get_ident()}


def test_look_ahead_is_bounded_by_the_window():
    probe = Probe({0: 0.5})
    results = ordered_map(probe, range(100), workers=2, window=6)
    first = next(results)
    assert first == (0, 0)
    # while item 0 ran, at most window items were submitted (0 included)
    assert max(probe.started) < 6
    results.close()


def test_an_error_is_raised_as_soon_as_it_happens_and_stops_new_items():
    go, head_done = threading.Event(), threading.Event()

    def fn(x: int) -> int:
        if x == 3:
            raise ValueError("item 3 is bad")
        if x == 0:  # the head waits until the test lets it go: the error must not wait for it
            go.wait(30)
            head_done.set()
        return x

    try:
        with pytest.raises(ValueError, match="item 3 is bad"):
            list(ordered_map(fn, range(50), workers=4))
        assert not head_done.is_set()  # raised while the head was still running
    finally:
        go.set()
