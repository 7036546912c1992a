"""``summary.json`` through the run folder's one writer and reader (``run.read``) keeps the
format on disk."""

from __future__ import annotations

import json

import pytest

from recallbench.errors import DatasetFormatError
from recallbench.metrics.summary import metric_entry
from recallbench.run.read import SUMMARY_FILE, RunSummary, read_run, read_summary, write_summary

# The shape every run folder has (metrics.scoring + the runner's counts), with keys out of order.
SUMMARY: RunSummary = {
    "n_predictions": 3,
    "metrics": {
        "rouge_l": {"value": 0.25, "n": 3, "ci95": [0.1, 0.4], "per_session": {"2": {"n": 3}}},
    },
    "n_episodes": 1,
    "memory": {"totals": {"written": 2}},
    "failed_calls_not_scored": 0,
}


def test_write_then_read_gives_the_same_summary_in_the_old_format(tmp_path):
    path = write_summary(tmp_path, SUMMARY)
    assert path == tmp_path / "summary.json" == tmp_path / SUMMARY_FILE
    # the format every committed run has: indent 2, sorted keys, a final newline
    assert path.read_text(encoding="utf-8") == json.dumps(SUMMARY, indent=2, sort_keys=True) + "\n"
    assert read_run(tmp_path, need_record=False).has_summary and read_summary(tmp_path) == SUMMARY
    assert read_run(tmp_path, need_record=False).summary == SUMMARY
    assert metric_entry(read_summary(tmp_path), "rouge_l")["ci95"] == [0.1, 0.4]
    assert metric_entry(read_summary(tmp_path), "bleu4") is None  # not scored: no entry


def test_a_run_without_summary_has_none(tmp_path):
    assert not read_run(tmp_path, need_record=False).has_summary
    assert read_run(tmp_path, need_record=False).summary == {"metrics": {}}
    with pytest.raises(FileNotFoundError):
        read_summary(tmp_path)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "expected a JSON object, got list"),
        ('{"n_episodes": 2}', "got ['n_episodes']"),
        ('{"metrics": [1]}', "got ['metrics']"),
    ],
)
def test_an_unusable_summary_names_the_file_and_what_was_expected(tmp_path, text, expected):
    (tmp_path / "summary.json").write_text(text, encoding="utf-8")
    with pytest.raises(DatasetFormatError) as err:
        read_summary(tmp_path)
    assert str(tmp_path / "summary.json") in str(err.value) and expected in str(err.value)


def test_a_nan_is_refused_not_written(tmp_path):
    with pytest.raises(ValueError):
        write_summary(tmp_path, {"metrics": {"f1": {"value": float("nan")}}})
