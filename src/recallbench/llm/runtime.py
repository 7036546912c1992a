"""Runtime helpers of ``LLM``: the private event loop thread and the progress bar."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from collections.abc import Coroutine
from typing import TypeVar

from recallbench.llm.task import TaskResult
from recallbench.llm.usage import Usage

T = TypeVar("T")


class LoopThread:
    """An asyncio event loop running forever in a daemon thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True, name="llm-loop")
        self.thread.start()

    def run(self, coro: Coroutine[object, object, T]) -> T:
        if threading.current_thread() is self.thread:
            raise RuntimeError("LLM.run called from its own event loop thread (would deadlock)")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


class Progress:
    """A tqdm bar of finished calls with cached / failed counts and the running cost."""

    def __init__(self, usage: Usage, total: int, desc: str, enabled: bool) -> None:
        self.bar = None
        if enabled:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc=desc, unit="call", leave=False)
        self.usage, self.cached, self.failed, self.shown = usage, 0, 0, 0.0

    def __call__(self, result: TaskResult[object]) -> None:
        if self.bar is None:
            return
        self.cached += int(result.cached)
        self.failed += int(result.failure is not None)
        self.bar.update(1)
        if time.monotonic() - self.shown > 0.5:  # set_postfix redraws: not on every call
            self.shown = time.monotonic()
            totals = self.usage.totals
            cost = "n/a" if totals.cost_unknown_calls else f"${totals.cost_usd:.4f}"
            self.bar.set_postfix(cached=self.cached, failed=self.failed, cost=cost)

    def more(self, n: int) -> None:
        """``n`` more calls to wait for (repair turns)."""
        if self.bar is not None:
            self.bar.total += n
            self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def progress_enabled(progress: bool | None) -> bool:
    if progress is not None:
        return progress
    return sys.stderr.isatty() and os.environ.get("RECALLBENCH_PROGRESS", "1") != "0"
