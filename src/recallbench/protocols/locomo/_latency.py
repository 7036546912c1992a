"""Per-question latency of a ``locomo_qa`` run, as Mem0 (sec. 4.4) and Zep report it.

``latency_summary`` gives p50 / p95 (``numpy.percentile``, linear interpolation) in seconds of
each timed stage: ``search`` (a question's recall, ``recall_s``), ``answer`` (its answer
generation, ``generate_s``), ``total`` (the two added: Mem0's "total" latency, the time from the
question to the answer) over the answered questions, and ``memory_construction`` per session
(``observe_s`` of the ``memory`` records). A stage no record timed is absent (never 0), and the
block is absent when nothing was timed (runs older than the timing).

Not comparable to the Mem0 paper's or Zep's figures: another machine, another generator (the
offline extractive reader takes microseconds where GPT-4o-mini takes seconds), no network, and
the judge is not timed; ``note`` says so in every summary.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from recallbench.records import Prediction
from recallbench.verdict import JSONValue

NOTE = (
    "seconds per question (memory_construction: per session), p50/p95; this machine and this "
    "generator: not comparable to the Mem0 paper's or Zep's latencies"
)


def _quantiles(values: list[float]) -> dict[str, JSONValue]:
    p50, p95 = np.percentile(np.asarray(values, dtype=float), [50, 95])
    return {"p50": round(float(p50), 6), "p95": round(float(p95), 6), "n": len(values)}


def latency_summary(predictions: Sequence[Prediction]) -> dict[str, JSONValue] | None:
    """The summary's ``latency`` block (None when no stage was timed)."""
    answers = [p for p in predictions if p.kind == "answer"]
    stages: dict[str, list[float]] = {
        "search": [float(p.meta["recall_s"]) for p in answers if "recall_s" in p.meta],
        "answer": [float(p.meta["generate_s"]) for p in answers if "generate_s" in p.meta],
        "total": [
            float(p.meta["recall_s"]) + float(p.meta["generate_s"])
            for p in answers
            if "recall_s" in p.meta and "generate_s" in p.meta
        ],
        "memory_construction": [
            float(p.meta["observe_s"])
            for p in predictions
            if p.kind == "memory" and "observe_s" in p.meta
        ],
    }
    timed = {name: _quantiles(v) for name, v in stages.items() if v}
    return {**timed, "note": NOTE} if timed else None
