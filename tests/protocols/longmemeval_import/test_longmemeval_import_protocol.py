"""The import protocol on the fixture: shipped labels per type, the offline twin beside, agreement."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from recallbench.errors import DatasetFormatError
from recallbench.judges.longmemeval import LongMemEvalJudge
from recallbench.llm import build_llm
from recallbench.protocols.longmemeval_import import (
    LongMemEvalImportProtocol,
    qa_report,
    read_hypotheses,
    reference_types,
)
from recallbench.records import Episode, QAItem, Session, Turn

FIX = Path(__file__).resolve().parents[3] / "data" / "fixtures" / "longmemeval_import"
JUDGED = FIX / "hypotheses.jsonl.eval-results-gpt-4o"
ORACLE = FIX / "longmemeval" / "longmemeval_oracle.json"


def _episodes() -> list[Episode]:
    """The fixture's questions as episodes in the loader's shape (one session, one question)."""
    out = []
    for x in json.loads(ORACLE.read_text()):
        eid = f"longmemeval/{x['question_id']}"
        sid = x["haystack_session_ids"][0]
        turns = tuple(
            Turn(f"{eid}/{sid}_{n}", t["role"], t["content"])
            for n, t in enumerate(x["haystack_sessions"][0], start=1)
        )
        start = datetime.strptime(x["haystack_dates"][0], "%Y/%m/%d (%a) %H:%M")
        qa = QAItem(
            f"{eid}/question",
            x["question"],
            (str(x["answer"]),),
            1,
            kind=x["question_type"],
            meta={"question_id": x["question_id"], "abstention": "_abs" in x["question_id"]},
        )
        session = Session(f"{eid}/{sid}", 1, start, turns)
        out.append(Episode(eid, "longmemeval", ("user", "assistant"), (session,), (qa,)))
    return out


def _run(protocol: LongMemEvalImportProtocol, episodes: list[Episode]):
    protocol.prepare(episodes)
    llm = protocol.judge.llm
    preds = [p for e in episodes for p in protocol.run_episode(e, None, llm).predictions]
    return preds, protocol.score(preds)


def _protocol(errata: str | None = None) -> LongMemEvalImportProtocol:
    judge = LongMemEvalJudge(build_llm({"backend": "extractive"}))
    return LongMemEvalImportProtocol(file=str(JUDGED), errata=errata, judge=judge)


def test_shipped_labels_per_type_equal_print_qa_metrics_by_hand():
    preds, (scores, summary) = _run(_protocol(), _episodes())
    m = summary["metrics"]
    shipped = m["accuracy_autoeval"]
    assert shipped["value"] == 0.5 and shipped["n"] == 10
    by_type = {t: e["value"] for t, e in shipped["subsets"].items()}
    assert by_type == {
        "single-session-user": pytest.approx(2 / 3),
        "single-session-assistant": 1.0,
        "single-session-preference": 0.0,
        "multi-session": 0.5,
        "temporal-reasoning": 0.5,
        "knowledge-update": 0.0,
        "abstention": 0.5,
    }
    assert m["task_averaged_autoeval"]["value"] == pytest.approx(4 / 9)
    read = read_hypotheses(JUDGED)
    report = qa_report(
        {h.question_id: bool(h.label) for h in read.hypotheses}, reference_types(ORACLE)
    )
    assert m["task_averaged_autoeval"]["value"] == pytest.approx(report.task_averaged)
    assert shipped["value"] == report.overall
    per_item = {s.pred_id.split("/")[1]: s.value for s in scores if s.metric == "accuracy_autoeval"}
    assert per_item == {h.question_id: float(h.label) for h in read.hypotheses}


def test_the_offline_twin_rejudges_beside_the_labels():
    preds, (_, summary) = _run(_protocol(), _episodes())
    m = summary["metrics"]
    twin = {p.meta["question_id"]: p.meta["judge"]["label"] for p in preds}
    # by the twin's rules (judges.longmemeval.offline_reply): key words found, off-by-one days
    # for temporal, a decline for abstention
    assert twin["a1b2c3d4"] == 1 and twin["b2c3d4e5"] == 0
    assert twin["gpt4_f6a7b8c9"] == 1  # "5 days" against "4 days. 5 days ... acceptable"
    assert twin["b8c9d0e1_abs"] == 1 and twin["gpt4_d0e1f2a3_abs"] == 0
    shipped = {p.meta["question_id"]: p.meta["judges"]["autoeval"] for p in preds}
    same = sum(twin[q] == shipped[q] for q in twin)
    assert m["agree_j"]["value"] == pytest.approx(same / 10)
    assert -1 <= m["kappa_j"]["value"] <= 1 and m["accuracy"]["n"] == 10
    assert summary["judge"]["name"] == "longmemeval" and "offline" in summary["judge"]["note"]


def test_errata_add_the_clean_subset(tmp_path):
    mine = tmp_path / "e.yaml"
    mine.write_text(
        "errata:\n  - {question_id: a1b2c3d4, field: answer, applies: true, score_changing: true,"
        " thread: t, data: d, sources: [x]}\n"
    )
    preds, (_, summary) = _run(_protocol(str(mine)), _episodes())
    clean = summary["metrics"]["accuracy_autoeval"]["subsets"]["clean"]
    assert clean["n"] == 9 and clean["value"] == pytest.approx(4 / 9)
    assert summary["errata"]["flagged_in_run"] == ["a1b2c3d4"]
    flagged = next(p for p in preds if p.meta["question_id"] == "a1b2c3d4")
    assert flagged.meta["erratum"]["score_changing"] is True


def test_unloaded_ids_are_counted_and_a_foreign_file_fails(tmp_path):
    protocol = _protocol()
    protocol.prepare(_episodes()[:4])
    assert protocol.how["matched"] == 4 and protocol.how["not_loaded"] == 6
    other = tmp_path / "other.jsonl"
    other.write_text('{"question_id": "locomo_0_qa1", "hypothesis": "x"}\n')
    with pytest.raises(DatasetFormatError, match="other.jsonl: none of its 1 question ids"):
        LongMemEvalImportProtocol(file=str(other), judge=protocol.judge).prepare(_episodes())
