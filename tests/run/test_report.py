"""The end-of-run summary (``run.report``): what the terminal shows is what the run folder holds.

Headline metrics with their interval and n, the usage over every attempt, cache hits and time
spent, status, attempt, wall time and code; a folder whose summary is missing or unreadable
still gets its panel, with no metric rows.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

from recallbench.run.report import HEADLINE, compute_line, end_of_run, metric_rows, usage_line

USAGE = {
    "totals": {
        "calls": 12,
        "cached_calls": 5,
        "failures": 1,
        "parse_failures": 2,
        "repairs": 3,
        "repaired": 2,
        "cost_usd": 0.01234,
    },
    "compute": {
        "lm_scores": {"memory_hits": 2, "disk_hits": 1, "computed": 4},
        "embeddings": {"memory_hits": 0, "disk_hits": 0, "misses": 0},
        "seconds": {"lm_scoring": 1.26, "llm_calls": 0.01, "metrics": 0.4},
    },
}


def _shown(run_dir: Path) -> str:
    console = Console(file=io.StringIO(), record=True, width=160, color_system=None)
    console.print(end_of_run(run_dir))
    return console.export_text()


def _folder(tmp_path: Path, summary: object) -> Path:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    info = {"status": "finished", "attempt": 2, "started_unix": 100.0, "finished_unix": 112.5}
    (run_dir / "run.json").write_text(json.dumps({**info, "git_sha": "0123456789abcdef"}))
    (run_dir / "usage.json").write_text(json.dumps(USAGE))
    (run_dir / "summary.json").write_text(json.dumps(summary))
    return run_dir


def test_metric_rows_show_the_headline_metrics_with_interval_and_n():
    metrics = {f"m{i}": {"value": i / 3, "ci95": [0.0, 1.0], "n": 9} for i in range(HEADLINE + 2)}
    metrics["m1"] = {"value": 0.5, "n": 4}  # no interval
    metrics["m2"] = {"per_session": {}}  # no value: not a headline number
    rows = metric_rows({"metrics": metrics})
    assert rows[0] == ("m0", "0", "[0, 1]", "9")
    assert rows[1] == ("m1", "0.5", "—", "4")
    assert [r[0] for r in rows] == [f"m{i}" for i in range(HEADLINE) if i != 2]


def test_usage_line_counts_every_call_and_says_when_cost_is_unknown():
    line = usage_line(USAGE)
    assert line == (
        "calls 12 · cache hits 5 · failed 1 · unparsed 2 · repair turns 3 (2 parsed) · cost $0.0123"
    )
    bare = usage_line({"totals": {"calls": 1, "cost_usd": None}})
    assert "repair" not in bare and bare.endswith("cost unknown")


def test_compute_line_counts_cache_hits_and_the_time_that_mattered():
    assert compute_line(USAGE) == "LM scores 7 (3 cached) · time: lm scoring 1.3 s, metrics 0.4 s"
    assert compute_line({}) is None


def test_the_panel_shows_what_the_run_folder_holds(tmp_path):
    summary = {
        "metrics": {"rouge_l": {"value": 0.25, "ci95": [0.2, 0.3], "n": 40}},
        "n_episodes": 3,
        "n_predictions": 40,
        "failed_calls_not_scored": 2,
    }
    shown = _shown(_folder(tmp_path, summary))
    assert "rouge_l" in shown and "[0.2, 0.3]" in shown
    assert "status finished · attempt 2 · 3 episodes · 40 predictions · wall 12.5 s" in shown
    assert "calls 12 · cache hits 5" in shown and "code 0123456789ab" in shown
    assert "2 failed calls left out of the scores" in shown


def test_a_folder_without_a_readable_summary_still_gets_its_panel(tmp_path):
    shown = _shown(_folder(tmp_path, ["not", "a", "summary"]))
    assert "status finished" in shown and "rouge_l" not in shown and "failed calls" not in shown
    (tmp_path / "run" / "summary.json").unlink()
    assert "status finished" in _shown(tmp_path / "run")
