"""LongMemEval errata: the shipped file's entries, the clean subset, and each entry against the data."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from recallbench.datasets.longmemeval_errata import DEFAULT_ERRATA, load_errata, read_errata
from recallbench.errors import DatasetFormatError


def test_default_errata_flag_only_what_applies_and_changes_scores():
    errata = load_errata("default")
    ids = set(errata.entries)
    assert {"370a8ff4", "gpt4_88806d6e", "eac54add", "9aaed6a3", "gpt4_f420262d"} <= ids
    flagged = {q for q in ids if errata.flagged(q)}
    assert flagged == {"370a8ff4", "9aaed6a3"}
    assert errata.subsets("370a8ff4") == [] and errata.subsets("eac54add") == ["clean"]
    assert errata.subsets("66f24dbb") == ["clean"]  # an unlisted question
    assert errata.meta("370a8ff4") == {
        "erratum": {
            "sources": ["default"],
            "error_type": "answer (applies)",
            "score_changing": True,
        }
    }
    assert errata.meta("66f24dbb") == {}
    for e in errata.entries.values():
        assert all(
            s.startswith("https://github.com/xiaowu0162/LongMemEval/issues/") for s in e.sources
        )
    described = errata.describe({"370a8ff4", "eac54add", "66f24dbb"})
    assert described["flagged_in_run"] == ["370a8ff4"] and described["clean"] == 2


def test_no_errata_means_no_clean_subset():
    assert load_errata(None).subsets("370a8ff4") == []
    assert load_errata(None).meta("370a8ff4") == {}


def test_sources_combine_first_wins_and_bad_files_say_where(tmp_path):
    mine = tmp_path / "mine.yaml"
    mine.write_text(
        "errata:\n  - {question_id: 370a8ff4, field: answer, applies: false, score_changing: false,"
        " thread: t, data: d, sources: [x]}\n  - {question_id: 66f24dbb, field: answer,"
        " applies: true, score_changing: true, thread: t, data: d, sources: [x]}\n"
    )
    both = load_errata(f"default+{mine}")
    assert both.flagged("370a8ff4") and both.flagged("66f24dbb")
    assert len(both.conflicts) == 1 and "370a8ff4: default" in both.conflicts[0]
    bad = tmp_path / "bad.yaml"
    bad.write_text("errata:\n  - {question_id: q, field: answer, applies: yes_please}\n")
    with pytest.raises(DatasetFormatError, match=r"bad.yaml errata\[0\]: 'applies' should be"):
        read_errata(bad)
    bad.write_text(
        "errata:\n  - {question_id: q, field: speaker, applies: true, score_changing:"
        " true, thread: t, data: d, sources: [x]}\n"
    )
    with pytest.raises(DatasetFormatError, match="field should be one of"):
        read_errata(bad)
    with pytest.raises(DatasetFormatError, match="not found"):
        load_errata(str(tmp_path / "none.yaml"))


def _days(a: str, b: str) -> float:
    fmt = "%Y/%m/%d (%a) %H:%M"
    return (datetime.strptime(b, fmt) - datetime.strptime(a, fmt)).total_seconds() / 86400


@pytest.fixture(scope="module")
def oracle(real_data_dir):
    data = json.loads((real_data_dir / "longmemeval" / "longmemeval_oracle.json").read_text())
    return {x["question_id"]: x for x in data}


def _sessions(item):
    return dict(
        zip(
            item["haystack_session_ids"],
            zip(item["haystack_dates"], item["haystack_sessions"], strict=True),
            strict=True,
        )
    )


def test_every_entry_is_a_question_of_the_release(oracle):
    for qid in read_errata(DEFAULT_ERRATA):
        assert qid.question_id in oracle, qid.question_id


def test_each_applying_entry_is_what_the_data_shows(oracle):
    # 370a8ff4: the key says 15 weeks; its two answer sessions are 81 days apart
    item = oracle["370a8ff4"]
    s = _sessions(item)
    first, second = (s[i][0] for i in ("answer_61d1be50_1", "answer_61d1be50_2"))
    assert str(item["answer"]) == "15" and round(_days(first, second)) == 81
    # eac54add: two answer sessions ~18.7 days apart, only _2 holds a has_answer turn
    s = _sessions(oracle["eac54add"])
    assert not any(t.get("has_answer") for t in s["answer_0d4d0348_1"][1])
    assert any(t.get("has_answer") for t in s["answer_0d4d0348_2"][1])
    assert 18 < _days(s["answer_0d4d0348_1"][0], s["answer_0d4d0348_2"][0]) < 19
    # 9aaed6a3: the purchase turn's session is 4 days before the question, on a Thursday
    item = oracle["9aaed6a3"]
    turn_date = _sessions(item)["answer_353d3c6d_1"][0]
    assert turn_date.startswith("2023/05/25 (Thu)") and item["question_date"].startswith(
        "2023/05/29"
    )
    # gpt4_f420262d: session _4 (2023/02/20, not Valentine's day) has has_answer turns
    date, turns = _sessions(oracle["gpt4_f420262d"])["answer_d8a1af6c_4"]
    assert date.startswith("2023/02/20") and sum(bool(t.get("has_answer")) for t in turns) == 2
