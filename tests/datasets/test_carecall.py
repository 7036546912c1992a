"""CareCall_mem loader: episode nesting, flat session lists, degenerate sessions, errors, real data."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from recallbench.clock import CARECALL_GAP, EPOCH
from recallbench.datasets import carecall
from recallbench.errors import DatasetFormatError
from recallbench.records import Episode

SAMPLE = "carecall_mem/data/carecall-memory-sample.json"


@pytest.fixture(scope="module")
def episodes(fixtures_dir):
    return {e.episode_id: e for e in carecall.load(fixtures_dir)}


@pytest.fixture
def nested(fixtures_dir):
    return json.loads((fixtures_dir / SAMPLE).read_text())


def _write(tmp_path, data):
    path = tmp_path / SAMPLE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=4))


def test_nested_episodes(episodes):
    assert list(episodes) == ["interactive-901", "interactive-902", "interactive-903"]
    e = episodes["interactive-901"]
    assert e.dataset == "carecall" and e.speakers == ("system", "user")
    assert e.meta["bot"] == "system" and e.meta["language"] == "ko"
    assert [s.session_id for s in e.sessions] == [f"interactive-901-S{i}" for i in (1, 2, 3)]
    s2 = e.sessions[1]
    assert s2.index == 2 and s2.turns[0].speaker == "system" and s2.turns[1].speaker == "user"
    assert s2.gold["memory"] == ["무릎이 아픔", "다음 주에 병원에 갈 예정"]
    assert s2.gold["summary"] == ["무릎 물리치료를 받는 중", "딸이 반찬을 보내 줌"]
    assert e.sessions[0].gold["memory"] == []
    assert s2.turns[2].turn_id == "interactive-901-S2/t2"


def test_regular_clock_and_gap_option(episodes, fixtures_dir):
    starts = [s.start for s in episodes["interactive-901"].sessions]
    assert starts == [EPOCH, EPOCH + CARECALL_GAP, EPOCH + 2 * CARECALL_GAP]
    weekly = carecall.load(fixtures_dir, gap_days=7)[0]
    assert weekly.sessions[2].start - weekly.sessions[0].start == timedelta(days=14)


def test_degenerate_sessions_kept_or_skipped(episodes, fixtures_dir):
    e = episodes["interactive-902"]
    assert [len(s.turns) for s in e.sessions] == [1, 1]
    assert e.meta["degenerate_sessions"] == ["interactive-902-S1", "interactive-902-S2"]
    assert e.sessions[0].gold == {"memory": [], "summary": []}
    skipped = carecall.load(fixtures_dir, skip_degenerate=True)
    assert [x.episode_id for x in skipped] == ["interactive-901", "interactive-903"]


def test_flat_list_of_sessions_grouped_by_guid(episodes, fixtures_dir):
    flat = {
        e.episode_id: e
        for e in carecall.load(fixtures_dir, file="carecall-memory-flat-sessions.json")
    }
    assert list(flat) == ["interactive-903", "interactive-901"]  # order of first appearance
    for episode_id, e in flat.items():
        assert e.sessions == episodes[episode_id].sessions  # shuffled input, same sessions by index


def test_round_trip(episodes):
    for e in episodes.values():
        assert Episode.from_dict(e.to_dict()) == e


def test_bad_guid(tmp_path, nested):
    nested[0][1]["guid"] = "interactive-901-session2"
    _write(tmp_path, nested)
    with pytest.raises(
        DatasetFormatError, match=rf"{SAMPLE} episode 0 session 1: guid 'interactive-901-session2'"
    ):
        carecall.load(tmp_path)


def test_bad_role_names_session(tmp_path, nested):
    nested[2][1]["dialogue"][3]["role"] = "assistant"
    _write(tmp_path, nested)
    with pytest.raises(DatasetFormatError) as err:
        carecall.load(tmp_path)
    assert str(err.value) == (
        f"{SAMPLE} episode 2 session 1 (interactive-903-S2) dialogue[3]: "
        "role should be 'system' or 'user', got 'assistant'"
    )


def test_duplicates_and_mixed_episodes(tmp_path, nested):
    _write(tmp_path, [nested[0], [nested[0][1]]])
    with pytest.raises(DatasetFormatError, match="duplicate session 'interactive-901-S2'"):
        carecall.load(tmp_path)
    _write(tmp_path, [nested[0] + nested[2][:1]])
    with pytest.raises(DatasetFormatError, match="belongs to another episode"):
        carecall.load(tmp_path)
    _write(tmp_path, {"episodes": nested})
    with pytest.raises(DatasetFormatError, match="expected a JSON list"):
        carecall.load(tmp_path)
    missing = [[{k: v for k, v in nested[0][0].items() if k != "memory"}]]
    _write(tmp_path, missing)
    with pytest.raises(
        DatasetFormatError, match=r"'memory' missing \(keys: \['dialogue', 'guid', 'summary'\]\)"
    ):
        carecall.load(tmp_path)


def test_missing_file_lists_folder(fixtures_dir):
    with pytest.raises(FileNotFoundError, match="carecall-memory-sample.json"):
        carecall.load(fixtures_dir, file="carecall-memory_en_auto_translated.json")


# ---------------------------------------------------------------- real data (skipped when absent)


def test_real_sample(real_data_dir):
    real = carecall.load(real_data_dir)
    assert len(real) == 10
    assert sum(len(e.sessions) for e in real) == 45
    by_id = {e.episode_id: e for e in real}
    assert by_id["interactive-687"].meta["degenerate_sessions"] == [
        "interactive-687-S1",
        "interactive-687-S2",
    ]
    assert len(by_id["interactive-172"].sessions) == 3
    assert all(e.sessions[0].gold["memory"] == [] for e in real)
    assert all(e.meta["language"] == "ko" for e in real)
    assert sum(len(e.sessions) for e in carecall.load(real_data_dir, skip_degenerate=True)) == 43
