"""An imported run under errata: the clean subset, the ceiling and shipped verdicts on the
release's key (``protocols.locomo._errata``), from the fixture answers and a fixture
``locomo_audit/errors.json`` written in the audit's format.

The fixture errata (``data/fixtures/locomo_import/locomo_audit/errors.json``) flag three of the
12 category 1-4 questions: conv-26 q8 (HALLUCINATION: its answer "nothing recorded" becomes
"sardines", the entry's ``use: answer``), conv-26 q9 (AMBIGUOUS: flagged, answer kept) and conv-30 q1 (WRONG_CITATION:
evidence only, not score-changing). So 10 questions are clean, the ceiling is 10/12 and the
audit's three verdicts on q8 were judged against the release's answer.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

from recallbench import cli
from recallbench.errors import DatasetFormatError
from recallbench.protocols.locomo_import._formats import ImportedAnswer
from recallbench.protocols.locomo_import._match import _check
from recallbench.records import QAItem

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures" / "locomo_import"
ANSWERS = FIXTURES / "answers"
ERRATA = "dataset.options.errata=locomo_audit"


@pytest.fixture
def importer(monkeypatch, capsys, tmp_path):
    """Call ``recallbench import-answers <argv>`` in-process on the fixture data root."""

    def call(*argv: str) -> tuple[int, str, str]:
        args = ["recallbench", "import-answers", *argv, f"paths.data_dir={FIXTURES}"]
        args += [f"paths.results_dir={tmp_path / 'results'}", "progress=false"]
        monkeypatch.setattr(sys, "argv", args)
        capsys.readouterr()
        try:
            cli.main()
            status = 0
        except SystemExit as exc:
            status = int(exc.code or 0)
        got = capsys.readouterr()
        return status, got.out, got.err

    return call


def _metric(summary: dict, name: str, subset: str) -> float:
    return round(100 * summary["metrics"][name]["subsets"][subset]["value"], 2)


def test_imported_run_under_errata_reports_clean_subset_and_ceiling(importer):
    status, out, err = importer(
        str(ANSWERS / "audit.json"), "--format", "locomo-audit", "--name", "a", ERRATA
    )
    assert status == 0, err
    summary = json.loads((Path(out.strip().splitlines()[-1]) / "summary.json").read_text())
    block = summary["errata"]
    assert block["sources"] == ["locomo_audit"]
    assert (block["corrected_or_flagged"], block["score_changing"], block["clean"]) == (3, 2, 10)
    assert block["release_key_verdicts"] == 1
    # per-question means of the 10 clean answers: 1, 2/3, 2/3, 1, 1, 0, 1, 0, 1, 1/3
    assert _metric(summary, "j_audit", "answerable") == 58.33
    assert _metric(summary, "j_audit", "clean") == 66.67
    assert round(100 * summary["metrics"]["ceiling"]["value"], 2) == 83.33
    for name in ("j_audit", "j_audit_1", "j_audit_majority"):
        assert summary["metrics"][name]["key"].startswith("1 verdicts judged against the release")
    assert "key" not in summary["metrics"]["j"]  # the offline twin judged the corrected answer
    rows = [
        json.loads(x) for x in (Path(out.strip().splitlines()[-1]) / "predictions.jsonl").open()
    ]
    q8 = next(p for p in rows if p["meta"]["qa_id"].endswith("/q8"))
    assert q8["reference"] == "sardines" and q8["meta"]["shipped"]["key"] == "release"
    assert q8["meta"]["errata"] == ["locomo_audit"]


def test_without_errata_no_clean_subset(importer):
    status, out, err = importer(
        str(ANSWERS / "audit.json"), "--format", "locomo-audit", "--name", "a"
    )
    assert status == 0, err
    summary = json.loads((Path(out.strip().splitlines()[-1]) / "summary.json").read_text())
    assert "errata" not in summary and "clean" not in summary["metrics"]["j_audit"]["subsets"]


def _qa(**erratum_fields: dict) -> QAItem:
    meta = {"category": 4, "erratum": {"fields": erratum_fields}}
    return QAItem("locomo/conv-26/q94", "Did Ben share it with Ada?", ("yes",), 2, meta=meta)


def test_match_checks_the_release_text_of_a_speaker_swapped_question():
    qa = _qa(speaker={"old": "Did Ada share it with Ben?", "new": "swap", "source": "s"})
    answer = ImportedAnswer("f item 0", "locomo_0_qa94", 0, "yes", qa_index=94, category=4)
    assert _check(dataclasses.replace(answer, question="Did Ada share it with Ben?"), qa)
    with pytest.raises(DatasetFormatError, match="does not match the release's"):
        _check(dataclasses.replace(answer, question="Did Ben share it with Ada?"), qa)


def test_match_checks_the_release_category_of_a_recategorised_question():
    qa = _qa(category={"old": 2, "new": 4, "source": "s"})
    answer = ImportedAnswer("f item 0", "locomo_0_qa94", 0, "yes", qa_index=94, category=2)
    assert not _check(answer, qa)
    with pytest.raises(DatasetFormatError, match="category 4, but"):
        _check(dataclasses.replace(answer, category=4), qa)


REAL = FIXTURES.parents[2].parent / "shared" / "data"


@pytest.mark.skipif(
    not (REAL / "locomo_audit" / "errors.json").is_file(), reason="needs ../shared/data"
)
def test_real_audit_file_under_default_and_audit_errata(monkeypatch, capsys, tmp_path):
    """conv-26 q94/q138 ask about a swapped speaker under the default errata: the file's
    release text still matches them; 100 questions are score-changing, 1,440 clean."""
    cot = REAL / "locomo_audit" / "fc-baseline" / "gpt-4o-mini-cot.json"
    args = ["recallbench", "import-answers", str(cot), "--format", "locomo-audit", "--name", "c"]
    args += ["dataset.options.errata=default+locomo_audit", f"paths.data_dir={REAL}"]
    args += [f"paths.results_dir={tmp_path}", "progress=false"]
    monkeypatch.setattr(sys, "argv", args)
    cli.main()
    folder = Path(capsys.readouterr().out.strip().splitlines()[-1])
    summary = json.loads((folder / "summary.json").read_text())
    matching = json.loads((folder / "run.json").read_text())["imported"]["matching"]
    assert matching["matched"] == matching["text_checked"] == 1540
    assert (summary["errata"]["score_changing"], summary["errata"]["clean"]) == (100, 1440)
    assert _metric(summary, "j_audit", "answerable") == 79.89  # the audit's per-run mean
    assert _metric(summary, "j_audit", "clean") == 81.71  # results/tables/locomo_referee.md
    # 56 answers changed (the audit's answer/strip/first uses and the default errata): WRONG_CITATION
    # entries and remarks change none (resources/locomo_audit_keys.yaml)
    assert summary["metrics"]["j_audit"]["key"].startswith("56 verdicts judged against")
    assert summary["errata"]["no_key"] == 29
