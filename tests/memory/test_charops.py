"""The character n-gram memory-operation rule, Algorithm 1 on Korean, set F1 and the fit."""

from __future__ import annotations

from datetime import datetime
from types import SimpleNamespace

import pytest

from recallbench.errors import ConfigError
from recallbench.llm import build_llm
from recallbench.memory.memory_update import (
    CHARNGRAM_DEFAULTS,
    MemoryUpdater,
    Transition,
    fit_charngram,
    set_f1,
    set_prf,
    transitions,
)
from recallbench.records import MemoryItem

# Hand-made 3-session Korean episode (our own sentences). Character bigrams inside words:
# "무릎이 아픔" = {무릎, 릎이, 아픔}; "무릎이 아파서 물리치료를 받음" shares {무릎, 릎이}:
# containment 2/9, overlap 2/3 -> REPLACE (related >= 0.5, no resolution cue).
# "공원 산책" = {공원, 산책} lies inside "매일 아침 공원 산책": containment 1 -> PASS.
# "무릎이 다 나음" = {무릎, 릎이, 다, 나음} vs the physiotherapy sentence: overlap 2/4 = 0.5,
# "나음" is a resolution cue, 2 shared bigrams -> DELETE (both go).
TH = {"pass_contain": 0.7, "related": 0.5, "delete_shared": 2}
S1 = ["무릎이 아픔", "매일 아침 공원 산책"]
S2 = ["무릎이 아파서 물리치료를 받음", "공원 산책", "딸이 반찬을 보내 줌"]
S3 = ["무릎이 다 나음"]
M2 = ["매일 아침 공원 산책", "무릎이 아파서 물리치료를 받음", "딸이 반찬을 보내 줌"]
M3 = ["매일 아침 공원 산책", "딸이 반찬을 보내 줌"]


def _items(prefix: str, texts: list[str]) -> list[MemoryItem]:
    return [
        MemoryItem(f"{prefix}{i}", t, "summary", datetime(2023, 1, 2), ())
        for i, t in enumerate(texts)
    ]


def test_algorithm1_on_a_korean_three_session_episode(llm, embedder):
    updater = MemoryUpdater(llm, embedder, offline_rule="charngram", charngram=TH)
    memory = updater.update([], _items("s1-", S1))
    assert [m.text for m in memory] == S1  # M = {} -> M' = S
    memory = updater.update(memory, _items("s2-", S2))
    assert [m.text for m in memory] == M2
    memory = updater.update(memory, _items("s3-", S3))
    assert [m.text for m in memory] == M3
    # 2 x 3 pairs (R, A, A / A, P, A), then 3 x 1 (A, D, A)
    assert updater.counts() == {"APPEND": 6, "REPLACE": 1, "PASS": 1, "DELETE": 1}


def test_auto_uses_the_character_rule_on_hangul_and_english_rule_otherwise(llm, embedder):
    auto = MemoryUpdater(llm, embedder, offline_rule="auto", charngram=TH)
    english = MemoryUpdater(llm, embedder, offline_rule="english")
    pairs = [
        ("무릎이 아픔", "무릎이 아파서 물리치료를 받음"),
        ("Had sore throat", "Throat is fully recovered"),
    ]
    got = [r.value for r in auto.classify(pairs)]
    assert got[0] == "REPLACE"  # the character rule (the English rule has no stems here)
    assert got[1] == english.classify(pairs[1:])[0].value == "DELETE"


def test_append_rule_and_unknown_rule(llm, embedder):
    updater = MemoryUpdater(llm, embedder, offline_rule="append")
    assert {r.value for r in updater.classify([("a b", "a b"), ("무릎", "무릎")])} == {"APPEND"}
    with pytest.raises(ConfigError, match="offline_rule 'nli' unknown"):
        MemoryUpdater(llm, embedder, offline_rule="nli")
    with pytest.raises(ConfigError, match="unknown charngram thresholds"):
        MemoryUpdater(llm, embedder, charngram={"pass": 1})


def test_set_f1_perfect_empty_and_partial():
    gold = ["무릎이 아픔", "공원 산책"]
    assert set_f1(["공원  산책 ", "무릎이 아픔"], gold) == 1.0  # whitespace-normalized match
    assert set_f1([], gold) == 0.0
    assert set_f1([], []) == 1.0
    p, r, f = set_prf(["무릎이 아픔", "딸이 있음", "손녀가 있음"], gold)
    assert (p, r) == (pytest.approx(1 / 3), 0.5) and f == pytest.approx(0.4)


def _session(index: int, memory: list[str], summary: list[str]):
    return SimpleNamespace(index=index, gold={"memory": memory, "summary": summary})


def test_transitions_pair_consecutive_sessions_only():
    ep = SimpleNamespace(
        episode_id="e",
        sessions=[
            _session(1, [], S1),
            _session(2, S1, S2),
            _session(4, M2, S3),
            _session(5, M3, []),
        ],
    )
    got = transitions([ep])
    # 2 -> 4 is a gap: no gold memory between them
    assert [(t.session_index, t.gold) for t in got] == [(1, tuple(S1)), (4, tuple(M3))]
    assert [t.has_pairs for t in got] == [False, True]


def test_fit_recovers_thresholds_that_reproduce_the_gold():
    data = [
        Transition("e", 2, tuple(S1), tuple(S2), tuple(M2)),
        Transition("e", 3, tuple(M2), tuple(S3), tuple(M3)),
    ]
    grid = {"pass_contain": (0.7,), "related": (0.5, 0.9), "delete_shared": (1000, 2)}
    fitted, f1 = fit_charngram(data, grid)
    assert fitted == TH and f1 == 1.0
    with pytest.raises(ValueError, match="no transitions"):
        fit_charngram([])


def test_thresholds_are_part_of_the_extractive_cache_key(tmp_path, embedder):
    # A sweep over offline thresholds must not reuse the replies of another setting.
    llm = build_llm({"backend": "extractive"}, cache_path=tmp_path / "c.sqlite")
    pair = [("무릎이 아픔", "무릎이 아파서 물리치료를 받음")]  # overlap 2/3
    loose = MemoryUpdater(llm, embedder, offline_rule="charngram", charngram=TH)
    strict = loose.with_charngram({**TH, "related": 0.9})
    assert loose.classify(pair)[0].value == "REPLACE"
    second = strict.classify(pair)[0]
    assert (second.value, second.cached) == ("APPEND", False)
    assert loose.classify(pair)[0].cached  # the same setting is still a cache hit


def test_defaults_are_the_documented_fit_on_the_real_sample(real_data_dir):
    from recallbench.datasets import carecall

    data = transitions(carecall.load(real_data_dir))
    fitted, f1 = fit_charngram(data)
    assert len(data) == 35
    assert fitted == CHARNGRAM_DEFAULTS and f1 == pytest.approx(0.893, abs=5e-4)


def test_fit_script_prints_the_fit_of_the_file(fixtures_dir, capsys):
    """``scripts/fit_charngram.py``: the fixture's 3 episodes have 4 session transitions."""
    import runpy
    from pathlib import Path

    from recallbench.datasets import carecall

    script = Path(__file__).parents[2] / "scripts" / "fit_charngram.py"
    assert runpy.run_path(str(script))["main"]([str(fixtures_dir)]) == 0
    fitted, f1 = fit_charngram(transitions(carecall.load(fixtures_dir)))
    assert capsys.readouterr().out == (
        f"4 transitions of 3 episodes: {fitted} mean set F1 {f1:.3f}\n"
    )
