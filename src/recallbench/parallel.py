"""An ordered, bounded map over daemon threads, for I/O-bound work (LLM calls over HTTP).

``ordered_map(fn, items, workers)`` runs ``fn`` on at most ``workers`` items at once, keeps at
most ``window`` items submitted (so the state of only that many items is alive), and yields
``(item, result)`` in input order. The first error of any item is raised as soon as it happens.

Why not ``concurrent.futures.ThreadPoolExecutor``: its ``map`` submits every item up front
(unbounded live state) and, more importantly, its worker threads are joined at interpreter exit,
so a stop signal (SIGTERM from SLURM, Ctrl-C) would wait for every in-flight episode to run to its
end. Here the workers are daemon threads: when the caller stops iterating (an error, a signal),
no further item starts, and a process that exits does not wait for the items still running
(their finished LLM calls are in the cache, so a resume repeats none of them).
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

_POLL_S = 0.2  # the caller wakes this often while waiting (signals are handled between waits)


class _Slot(Generic[T, R]):
    __slots__ = ("item", "result", "error", "done")

    def __init__(self, item: T) -> None:
        self.item = item
        self.result: R | None = None
        self.error: BaseException | None = None
        self.done = threading.Event()


def ordered_map(
    fn: Callable[[T], R], items: Iterable[T], workers: int, window: int | None = None
) -> Iterator[tuple[T, R]]:
    """Yield ``(item, fn(item))`` in input order, computing up to ``workers`` items at once.

    Args:
        workers: threads; 1 runs everything in the caller's thread (no thread at all).
        window: items submitted ahead of the one being waited for (default ``4 * workers``);
            a slow item at the head does not stall the others until the window is full.
    """
    if workers <= 1:
        for item in items:
            yield item, fn(item)
        return
    window = max(workers, window or 4 * workers)
    tasks: queue.SimpleQueue[_Slot[T, R] | None] = queue.SimpleQueue()
    stop, failed = threading.Event(), threading.Event()

    def work() -> None:
        while (slot := tasks.get()) is not None:
            if not stop.is_set():
                try:
                    slot.result = fn(slot.item)
                except BaseException as exc:  # handed to the caller, raised there
                    slot.error = exc
                    failed.set()
            slot.done.set()

    threads = [threading.Thread(target=work, daemon=True) for _ in range(workers)]
    for thread in threads:
        thread.start()
    source, pending = iter(items), deque[_Slot[T, R]]()
    try:
        while True:
            for item in islice(source, window - len(pending)):  # refill the window
                pending.append(slot := _Slot[T, R](item))
                tasks.put(slot)
            if not pending:
                return
            head = pending[0]
            while not head.done.wait(_POLL_S):
                if failed.is_set():
                    _raise_first(pending)
            pending.popleft()
            if head.error is not None:
                raise head.error
            yield head.item, head.result  # type: ignore[misc]
    finally:
        stop.set()  # nothing new starts; running items finish in the background
        for _ in threads:
            tasks.put(None)


def _raise_first(pending: deque[_Slot[T, R]]) -> None:
    for slot in pending:
        if slot.error is not None:
            raise slot.error
