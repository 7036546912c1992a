"""LongMemEval hypothesis files: the reader's shapes and errors, print_qa_metrics's arithmetic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recallbench.errors import DatasetFormatError
from recallbench.judges.longmemeval import QUESTION_TYPES
from recallbench.protocols.longmemeval_import import (
    REPORT_TYPES,
    qa_report,
    read_hypotheses,
    reference_types,
)

FIX = Path(__file__).resolve().parents[3] / "data" / "fixtures" / "longmemeval_import"
JUDGED = FIX / "hypotheses.jsonl.eval-results-gpt-4o"
ORACLE = FIX / "longmemeval" / "longmemeval_oracle.json"


def test_reads_judged_jsonl_plain_jsonl_and_a_judged_list():
    judged = read_hypotheses(JUDGED)
    assert judged.labelled and judged.models == ("gpt-4o-2024-08-06",)
    assert len(judged.hypotheses) == 10 and judged.hypotheses[1].label is False
    assert judged.hypotheses[0].where == f"{JUDGED.name} line 1"
    plain = read_hypotheses(FIX / "hypotheses.jsonl")
    assert not plain.labelled and plain.models == ()
    assert [h.hypothesis for h in plain.hypotheses] == [h.hypothesis for h in judged.hypotheses]
    listed = read_hypotheses(FIX / "judged_list.json")  # 0/1 labels as nambok/mentedb writes
    assert [h.label for h in listed.hypotheses] == [h.label for h in judged.hypotheses]
    assert listed.hypotheses[2].where == "judged_list.json [2]"


def test_the_fixture_per_type_accuracy_computed_by_hand():
    """Labels by type (fixture): ssu T F T(abs), ssa T, ssp F, ms T F, tr T F(abs), ku F."""
    read = read_hypotheses(JUDGED)
    report = qa_report(
        {h.question_id: bool(h.label) for h in read.hypotheses}, reference_types(ORACLE)
    )
    assert report.per_type == {
        "single-session-user": (pytest.approx(2 / 3), 3),
        "single-session-preference": (0.0, 1),
        "single-session-assistant": (1.0, 1),
        "multi-session": (0.5, 2),
        "temporal-reasoning": (0.5, 2),
        "knowledge-update": (0.0, 1),
    }
    assert report.task_averaged == pytest.approx((2 / 3 + 0 + 1 + 0.5 + 0.5 + 0) / 6)  # 0.4444
    assert report.overall == 0.5
    assert report.abstention == (0.5, 2)


def test_a_type_without_questions_leaves_the_task_average():
    report = qa_report(
        {"x": True, "y_abs": False}, {"x": "multi-session", "y_abs": "multi-session"}
    )
    assert report.per_type["knowledge-update"] == (None, 0)
    assert report.task_averaged == 0.5 and report.overall == 0.5 and report.abstention == (0.0, 1)
    with pytest.raises(DatasetFormatError, match="question z: type 'open-domain'"):
        qa_report({"z": True}, {"z": "open-domain"})
    assert set(REPORT_TYPES) == set(QUESTION_TYPES)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"question_id": "a", "hypothesis": "x"', ""], "h.jsonl line 1: invalid JSON"),
        (['{"question_id": "a"}'], "h.jsonl line 1: 'hypothesis' missing"),
        (['{"hypothesis": "x"}'], "h.jsonl line 1: 'question_id' missing"),
        (['{"question_id": 7, "hypothesis": "x"}'], "line 1: 'question_id' should be"),
        (
            ['{"question_id": "a", "hypothesis": "x"}', '{"question_id": "a", "hypothesis": "y"}'],
            "h.jsonl line 2: question a answered twice \\(first at h.jsonl line 1\\)",
        ),
        (
            [
                '{"question_id": "a", "hypothesis": "x", "autoeval_label": {"model": "m", '
                '"label": true}}',
                '{"question_id": "b", "hypothesis": "y"}',
            ],
            "h.jsonl line 2: 'autoeval_label' missing, but 1 of the 2 lines",
        ),
        (
            ['{"question_id": "a", "hypothesis": "x", "autoeval_label": {"label": true}}'],
            "line 1: 'autoeval_label.model' missing",
        ),
        (
            [
                '{"question_id": "a", "hypothesis": "x", "autoeval_label": {"model": "m", '
                '"label": "yes"}}'
            ],
            "line 1: 'autoeval_label.label' should be true/false",
        ),
        (["", "  "], "h.jsonl: no hypotheses read"),
    ],
)
def test_bad_files_name_file_line_and_field(tmp_path, lines, message):
    path = tmp_path / "h.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(DatasetFormatError, match=message):
        read_hypotheses(path)


def test_a_truncated_json_list_names_line_and_column(tmp_path):
    path = tmp_path / "h.json"
    path.write_text(json.dumps([{"question_id": "a", "hypothesis": "x"}], indent=1)[:-3])
    with pytest.raises(DatasetFormatError, match=r"h.json line \d+ column \d+: invalid JSON"):
        read_hypotheses(path)


@pytest.mark.slow
def test_real_files_types_agree_between_oracle_and_s(real_data_dir):
    folder = real_data_dir / "longmemeval"
    oracle = reference_types(folder / "longmemeval_oracle.json")
    s = reference_types(folder / "longmemeval_s_cleaned.json.xz")
    assert len(oracle) == 500 and len(s) == 498
    assert all(oracle[q] == t for q, t in s.items())
    assert sorted(set(oracle) - set(s)) == ["7e00a6cb", "gpt4_7a0daae1"]


MENTEDB = "longmemeval_published/mentedb/hypotheses_baseline-shared_q0-500.jsonl.eval-results-gpt-4o-2024-08-06"


def test_a_published_judged_file_reproduces_its_report(real_data_dir):
    """nambok/mentedb @ 9cf2776 (not in ../shared/data: put it under DATA_DIR to run this)."""
    path = real_data_dir / MENTEDB
    if not path.is_file():
        pytest.skip(f"{path} not found (docs/import_answers.md: where to fetch it)")
    read = read_hypotheses(path)
    types = reference_types(real_data_dir / "longmemeval" / "longmemeval_oracle.json")
    report = qa_report({h.question_id: bool(h.label) for h in read.hypotheses}, types)
    counts = {t: round(acc * n) for t, (acc, n) in report.per_type.items() if acc is not None}
    assert counts == {  # its _report.md: correct / total per type, 460/500 overall
        "single-session-user": 68,
        "single-session-preference": 28,
        "single-session-assistant": 56,
        "multi-session": 114,
        "temporal-reasoning": 123,
        "knowledge-update": 71,
    }
    assert report.overall == 0.92 and round(100 * report.task_averaged, 2) == 93.28
