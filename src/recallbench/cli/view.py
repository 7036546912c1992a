"""``recallbench view``: write a run's, a sweep's or two runs' report as one HTML file.

    recallbench view results/runs/<tag>/<stamp>/<job>            # one run
    recallbench view results/runs/<tag>/<stamp>                  # a sweep: its runs table + each run
    recallbench view <run A> --compare <run B> [--metric rouge_l] -o a_vs_b.html

``python -m recallbench.cli view ...`` and ``recallbench-view ...`` are the same command. The
file opens offline in any browser (no server, nothing fetched); the logic is in
``recallbench.view``, which reads only run-folder files.
"""

from __future__ import annotations

import argparse
import os

from recallbench.cli.config import user_errors


def view_main(argv: list[str] | None = None) -> None:
    """Console entry point ``recallbench view`` / ``recallbench-view``."""
    parser = argparse.ArgumentParser(
        prog="recallbench view",
        description="Write a self-contained HTML report of a run folder or a sweep folder "
        "(dialogue, recalled memory, memory store, prediction beside reference with per-item "
        "scores, failures, cost and latency), or of two runs item by item (--compare).",
    )
    parser.add_argument("folder", help="a run folder, or a folder above run folders (a sweep)")
    parser.add_argument(
        "--compare", metavar="RUN", help="a second run folder: compare item by item"
    )
    parser.add_argument(
        "--metric", help="per-item metric that orders a comparison (default: the run's first)"
    )
    parser.add_argument(
        "-o", "--out", help="the HTML file (default: <folder>/view.html, compare-<B>.html)"
    )
    parser.add_argument("--verbose", action="store_true", help="show tracebacks of user errors")
    ns = parser.parse_args(argv)
    if ns.verbose:
        os.environ["RECALLBENCH_VERBOSE"] = "1"
    if ns.metric and not ns.compare:
        parser.error("--metric orders a comparison: give --compare RUN too")
    with user_errors("recallbench view"):
        from recallbench.view import write_report

        path = write_report(ns.folder, ns.out, compare=ns.compare, metric=ns.metric)
    print(path)
