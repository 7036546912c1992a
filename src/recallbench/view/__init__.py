"""``recallbench view``: a run, a sweep or two runs side by side as one self-contained HTML file.

    from recallbench.view import write_report
    write_report("results/runs/adhoc/20260101-120000/msc-memory_retrieval-extractive")
    write_report(run_a, compare=run_b, out="a_vs_b.html")

A run's report: its setting and provenance, metrics with their 95% intervals per session, cost
and latency (per stage and task), failures and unparsed replies, every item (sortable,
filterable) and every episode as a dialogue: each predicted turn shows the model's output beside
the real turn with its per-item scores, the memory it recalled (linked to the turns it came
from), and after each session the memory store. A sweep folder adds a table of its runs (every
overridden key a column). A comparison pairs two runs' predictions by id, the largest per-item
difference first. Reads only run-folder files (``load``), like ``recallbench.analysis``.
"""

from __future__ import annotations

from pathlib import Path

from recallbench.io import safe_name, write_text
from recallbench.view.compare import Comparison, Pair, compare_runs
from recallbench.view.html import render_comparison, render_runs
from recallbench.view.load import RunFiles, load_folder, load_run
from recallbench.view.timeline import EpisodeView, episode_views

__all__ = [
    "Comparison",
    "EpisodeView",
    "Pair",
    "RunFiles",
    "compare_runs",
    "default_output",
    "episode_views",
    "load_folder",
    "load_run",
    "render_comparison",
    "render_runs",
    "write_report",
]


def default_output(folder: str | Path, compare: str | Path | None = None) -> Path:
    """``<folder>/view.html``, or ``<folder>/compare-<other>.html`` for a comparison."""
    folder = Path(folder)
    if compare is None:
        return folder / "view.html"
    other = Path(compare).resolve()
    return folder / f"compare-{safe_name('-'.join(other.parts[-3:]))}.html"


def write_report(
    folder: str | Path,
    out: str | Path | None = None,
    *,
    compare: str | Path | None = None,
    metric: str | None = None,
) -> Path:
    """Write the report of ``folder`` (or of ``folder`` against ``compare``); return its path."""
    if compare is None:
        html = render_runs(load_folder(folder), str(folder))
    else:
        html = render_comparison(compare_runs(load_run(folder), load_run(compare), metric))
    path = Path(out) if out is not None else default_output(folder, compare)
    write_text(path, html)
    return path
