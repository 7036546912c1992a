"""The end-of-run summary a user reads in the terminal (rich), built from the run folder's files.

Headline metrics with their episode-clustered 95% CI (``summary.json``), LLM calls, cache hits,
failed calls, unparsed replies, repair turns and cost summed over every attempt, LM scores and
embeddings served from a cache and the seconds spent in LM scoring, embeddings, LLM calls and
metrics (``usage.json``), wall time and status (``run.json``) and the run folder. It reads only
what the run wrote, so what the terminal shows is what a table or notebook will find.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from recallbench.errors import DatasetFormatError
from recallbench.metrics.summary import Summary
from recallbench.run.provenance import describe_code
from recallbench.run.read import USAGE_FILE, RunLog, RunRecord, RunSummary, RunUsage, read_run
from recallbench.verdict import JSONValue

if TYPE_CHECKING:
    from rich.panel import Panel

HEADLINE = 8  # metrics shown (the rest are in summary.json)


def _number(value: object) -> str:
    return f"{value:.4g}" if isinstance(value, (int, float)) else "n/a"


def _summary(run: RunRecord) -> RunSummary:
    """The run's summary; an unscored run (or an unreadable file) shows no metric."""
    try:
        return run.summary
    except (OSError, DatasetFormatError):
        return {"metrics": {}}


def _usage(run: RunRecord) -> RunUsage:
    """The run's usage over its attempts; none (or an unreadable file) shows zeros."""
    try:
        usage = run.usage
    except (OSError, DatasetFormatError):
        usage = None
    return usage or RunUsage.from_dict({})


def metric_rows(summary: Summary) -> list[tuple[str, str, str, str]]:
    """``(metric, value, 95% CI, n)`` for the first ``HEADLINE`` metrics of a summary."""
    rows = []
    for name, entry in list((summary.get("metrics") or {}).items())[:HEADLINE]:
        if not isinstance(entry, dict) or "value" not in entry:
            continue
        ci = entry.get("ci95")
        interval = f"[{_number(ci[0])}, {_number(ci[1])}]" if ci else "—"
        rows.append((name, _number(entry["value"]), interval, str(entry.get("n", ""))))
    return rows


def _object(value: object) -> Mapping[str, JSONValue]:
    return value if isinstance(value, dict) else {}


def _count(value: object) -> int | float:
    return value if isinstance(value, int | float) else 0


def usage_line(usage: RunUsage | Mapping[str, object]) -> str:
    """Calls, cache hits, failures, unparsed replies and cost over every attempt."""
    totals = (usage if isinstance(usage, RunUsage) else RunUsage.from_dict(usage)).totals
    cost, repairs = totals.cost_usd, totals.count("repairs")
    fixed = f" · repair turns {repairs} ({totals.count('repaired')} parsed)" if repairs else ""
    return (
        f"calls {totals.count('calls')} · cache hits {totals.count('cached_calls')} · "
        f"failed {totals.count('failures')} · unparsed {totals.count('parse_failures')}"
        f"{fixed} · cost {'unknown' if cost is None else f'${cost:.4f}'}"
    )


def compute_line(usage: RunUsage | Mapping[str, object]) -> str | None:
    """LM scores and embeddings (how many came from a cache) and where the time went."""
    raw = usage.raw if isinstance(usage, RunUsage) else usage
    compute = _object(raw.get("compute"))
    parts = []
    for what, label in (("lm_scores", "LM scores"), ("embeddings", "embeddings")):
        c = _object(compute.get(what))
        hits = _count(c.get("memory_hits")) + _count(c.get("disk_hits"))
        total = hits + _count(c.get("computed", c.get("misses")))
        if total:
            parts.append(f"{label} {total} ({hits} cached)")
    seconds = _object(compute.get("seconds")).items()
    spent = [f"{k.replace('_', ' ')} {v:.1f} s" for k, v in seconds if _count(v) >= 0.05]
    if spent:
        parts.append("time: " + ", ".join(spent))
    return " · ".join(parts) or None


def end_of_run(run_dir: Path) -> Panel:
    """A rich renderable summarising the run in ``run_dir``."""
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table

    run = read_run(run_dir, need_record=False)
    log = run.provenance.log
    summary, usage = _summary(run), _usage(run)
    table = Table(box=None, pad_edge=False)
    for column, justify in (("metric", "left"), ("value", "right"), ("95% CI", "right")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    table.add_column("n", justify="right")
    for row in metric_rows(summary):
        table.add_row(*row)
    started, finished = log.started_unix, log.finished_unix
    wall = f"{finished - started:.1f} s" if started and finished else "n/a"
    episodes = summary.get("n_episodes", log.n_episodes if log.n_episodes is not None else "?")
    lines = [
        f"status {log.status} · attempt {log.attempt or 1} · {episodes} episodes · "
        f"{summary.get('n_predictions', '?')} predictions · wall {wall}",
        usage_line(usage),
        f"code {describe_code(log.code)}",
    ]
    if line := compute_line(usage):
        lines.append(line)
    if summary.get("failed_calls_not_scored"):
        lines.append(f"{summary['failed_calls_not_scored']} failed calls left out of the scores")
    return Panel(Group(table, *lines), title="run summary", expand=False)


def print_end_of_run(run_dir: Path) -> None:
    """Print the summary on stderr (stdout keeps just the run folder, for scripts).

    The folder is printed below the panel, unwrapped, so it can be copied whole."""
    import sys

    from rich.console import Console

    Console(stderr=True).print(end_of_run(run_dir))
    print(f"run folder {run_dir}", file=sys.stderr, flush=True)


def say_stderr(line: str) -> None:
    """How the run layer says a job's lines by default (a caller may pass its own ``say``)."""
    import sys

    print(line, file=sys.stderr, flush=True)


def report_done(log: RunLog, run_dir: Path, say: Callable[[str], None] = say_stderr) -> None:
    """The end of a run that ran: a degraded run's warning, the end-of-run summary, and a
    warning when the code was not a clean commit."""
    from recallbench.run.record import describe_problems

    if log.status == "degraded":
        say(
            f"recallbench: warning: run degraded ({describe_problems(log.health or [])}); "
            f"samples of unparsed replies in {run_dir / USAGE_FILE}"
        )
    print_end_of_run(run_dir)
    if log.git_dirty:
        say(
            f"recallbench: warning: code {describe_code(log.code)}: this run is not "
            "reproducible from its commit alone (run.json: git_dirty, git_diff_sha256)"
        )
