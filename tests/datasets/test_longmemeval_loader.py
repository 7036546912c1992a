"""LongMemEval loader: fixtures in the official format, compressed copies, bad files, real data."""

from __future__ import annotations

import gzip
import json
import lzma
import shutil
from datetime import datetime

import pytest

from recallbench.datasets.longmemeval import load, missing_questions
from recallbench.errors import ConfigError, DatasetFormatError


def test_oracle_fixture_episodes(fixtures_dir):
    episodes = load(fixtures_dir, "oracle")
    assert [e.episode_id for e in episodes] == [
        "longmemeval/fx000001",
        "longmemeval/fx000002",
        "longmemeval/fx000003",
        "longmemeval/fx000004_abs",
    ]
    multi = episodes[1]
    # the file lists the later session first: replay is in time order, ids keep the release's
    assert [s.session_id for s in multi.sessions] == [
        "longmemeval/fx000002/answer_fx0b1",
        "longmemeval/fx000002/answer_fx0b2",
    ]
    assert multi.sessions[0].start == datetime(2023, 7, 1, 8, 10)
    assert multi.meta["question_date"] == "2023-07-10T20:00:00"
    qa = multi.qa[0]
    assert qa.answers == ("105",)  # a numeric answer is read as its text
    assert qa.after_session == 2 and qa.kind == "multi-session"
    assert qa.evidence == (
        "longmemeval/fx000002/answer_fx0b1_3",
        "longmemeval/fx000002/answer_fx0b2_1",
    )
    turn = multi.sessions[0].turns[2]
    assert turn.labels == {
        "role": "user",
        "lme_id": "answer_fx0b1_3",
        "lme_session": "answer_fx0b1",
        "has_answer": True,
    }
    assert episodes[3].qa[0].meta["abstention"] is True
    assert episodes[0].qa[0].meta["abstention"] is False
    assert all(e.meta["missing"] == [] for e in episodes)


def test_s_fixture_gz_names_missing_questions(fixtures_dir):
    episodes = load(fixtures_dir, "s")
    assert [e.meta["question_id"] for e in episodes] == ["fx000001", "fx000002"]
    # computed against the oracle file, not written anywhere
    assert episodes[0].meta["missing"] == ["fx000003", "fx000004_abs"]
    first = episodes[0]
    starts = [s.start for s in first.sessions]
    assert starts == sorted(starts) and len(first.sessions) == 3
    # a distractor session has no has_answer key: the label is absent, not False
    distractor = next(s for s in first.sessions if "sharegpt" in s.session_id)
    assert "has_answer" not in distractor.turns[0].labels


def test_filters(fixtures_dir):
    picked = load(fixtures_dir, "oracle", questions=["fx000003", "fx000001"])
    assert [e.meta["question_id"] for e in picked] == ["fx000003", "fx000001"]
    typed = load(fixtures_dir, "oracle", types="multi-session")
    assert [e.meta["question_id"] for e in typed] == ["fx000002"]
    assert len(load(fixtures_dir, "oracle", limit=2)) == 2
    with pytest.raises(ConfigError, match="fx000001"):
        load(fixtures_dir, "oracle", questions="fx00001")
    with pytest.raises(KeyError, match="multi-session"):
        load(fixtures_dir, "oracle", types="multisession")
    with pytest.raises(KeyError, match="oracle"):
        load(fixtures_dir, "orcale")


def _oracle(data_copy):
    path = data_copy / "longmemeval" / "longmemeval_oracle.json"
    return path, json.loads(path.read_text(encoding="utf-8"))


def test_xz_and_json_read_alike(data_copy):
    path, raw = _oracle(data_copy)
    plain = load(data_copy, "oracle")
    with lzma.open(path.with_name(path.name + ".xz"), "wt", encoding="utf-8") as fh:
        json.dump(raw, fh)
    path.unlink()
    packed = load(data_copy, "oracle")
    assert [(e.sessions, e.qa) for e in packed] == [(e.sessions, e.qa) for e in plain]
    assert packed[0].meta["source"] == "longmemeval/longmemeval_oracle.json.xz"


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda r: r[1].pop("answer_session_ids"),
            r"question fx000002: 'answer_session_ids' missing",
        ),
        (
            lambda r: r[2].update(question_type="single-hop"),
            r"question fx000003: 'question_type' 'single-hop' is not one of",
        ),
        (
            lambda r: r[0].update(question_date="May 30 2023"),
            r"question fx000001 'question_date': 'May 30 2023' is not a date",
        ),
        (
            lambda r: r[1]["haystack_dates"].pop(),
            r"question fx000002: 'haystack_session_ids' \(2\), 'haystack_dates' \(1\)",
        ),
        (
            lambda r: r[0]["haystack_sessions"][0][1].pop("role"),
            r"question fx000001 session answer_fx0g1 turn 2: 'role' missing",
        ),
    ],
)
def test_bad_records_name_file_question_and_field(data_copy, edit, expected):
    path, raw = _oracle(data_copy)
    edit(raw)
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(DatasetFormatError, match=expected) as info:
        load(data_copy, "oracle")
    message = str(info.value)
    assert message.startswith("longmemeval/longmemeval_oracle.json") and "\n" not in message


def test_truncated_files_are_one_line(data_copy):
    path, raw = _oracle(data_copy)
    text = json.dumps(raw)
    path.write_text(text[: len(text) // 2], encoding="utf-8")
    with pytest.raises(DatasetFormatError, match=r"longmemeval_oracle.json line 1 column \d+"):
        load(data_copy, "oracle")
    s = data_copy / "longmemeval" / "longmemeval_s_cleaned.json.gz"
    blob = s.read_bytes()
    s.write_bytes(blob[: len(blob) // 2])
    with pytest.raises(DatasetFormatError, match=r"longmemeval_s_cleaned.json.gz: cannot be read"):
        load(data_copy, "s")


def test_missing_file_lists_the_folder(data_copy):
    shutil.rmtree(data_copy / "longmemeval")
    with pytest.raises(FileNotFoundError, match="longmemeval_oracle.json not found"):
        load(data_copy, "oracle")


def test_missing_needs_both_files(data_copy):
    (data_copy / "longmemeval" / "longmemeval_oracle.json").unlink()
    assert missing_questions(data_copy, "s", ["fx000001"]) == []
    with gzip.open(data_copy / "longmemeval" / "longmemeval_s_cleaned.json.gz", "rt") as fh:
        assert len(json.load(fh)) == 2


@pytest.mark.slow
def test_real_oracle_counts(real_data_dir):
    if not (real_data_dir / "longmemeval" / "longmemeval_oracle.json").exists():
        pytest.skip("LongMemEval oracle not in the data dir")
    episodes = load(real_data_dir, "oracle")
    assert len(episodes) == 500
    counts: dict[str, int] = {}
    for e in episodes:
        counts[e.qa[0].kind] = counts.get(e.qa[0].kind, 0) + 1
    assert counts == {
        "single-session-user": 70,
        "single-session-assistant": 56,
        "single-session-preference": 30,
        "multi-session": 133,
        "temporal-reasoning": 133,
        "knowledge-update": 78,
    }
    assert sum(e.qa[0].meta["abstention"] for e in episodes) == 30
