"""The memory_ops protocol: set F1 per transition, held-out thresholds, held-out pairs."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from recallbench.datasets import carecall, memory_pairs
from recallbench.embed import HashingEmbedder
from recallbench.errors import ConfigError, DatasetFormatError
from recallbench.llm import build_llm
from recallbench.memory.memory_retrieval import MemoryRetrieval
from recallbench.memory.no_memory import NoMemory
from recallbench.protocols.memory_ops import MemoryOpsProtocol, derived_operation
from recallbench.protocols.memory_ops.scores import score_memory_ops


@pytest.fixture(scope="module")
def llm():
    return build_llm({"backend": "extractive"}, cache_path=None)


@pytest.fixture(scope="module")
def embedder():
    return HashingEmbedder(dim=256)


@pytest.fixture(scope="module")
def episodes(fixtures_dir):
    return carecall.load(fixtures_dir)


def _method(llm, embedder, rule: str | None):
    if rule is None:  # Memory accumulate: no updater, APPEND only
        return MemoryRetrieval(llm, embedder, k=5, update=False)
    return MemoryRetrieval(llm, embedder, k=5, update=True, offline_rule=rule)


def _run(protocol, episodes, method, llm):
    protocol.prepare(episodes)
    preds = [p for ep in episodes for p in protocol.run_episode(ep, method, llm).predictions]
    return preds + protocol.run_extra(lambda: method, llm)


def test_derived_operations_follow_which_sentences_survive():
    assert [derived_operation(m, s) for m, s in [(1, 1), (1, 0), (0, 1), (0, 0)]] == list("APRD")


def test_append_only_on_the_fixture_gives_hand_computed_set_f1(episodes, llm, embedder):
    # Fixture 901: S1 -> S2 transition M = {} (M' = S, F1 1); S2 -> S3: M = {무릎이 아픔,
    # 다음 주에 병원에 갈 예정}, S = {무릎 물리치료를 받는 중, 딸이 반찬을 보내 줌}, gold = S:
    # APPEND-only predicts all 4: P = 2/4, R = 1, F1 = 2/3. 903 S1 -> S2: M = {}, F1 1; 902 has
    # no summaries: M' = {} = gold, F1 1. Only 901 S2 -> S3 has pairs.
    protocol = MemoryOpsProtocol(fit="none", pair_sources=("own_ko",))
    preds = _run(protocol, episodes, _method(llm, embedder, None), llm)
    _, summary = score_memory_ops(preds)
    m = summary["metrics"]
    assert summary["n_transitions"] == 4 and summary["n_transitions_with_pairs"] == 1
    sets = {p.pred_id: p.meta["f1"] for p in preds if p.kind == "memory_set"}
    assert sets["interactive-901/S2/memory_ops"] == pytest.approx(2 / 3)
    assert m["set_f1"]["value"] == pytest.approx(2 / 3) and m["set_f1"]["n"] == 1
    assert m["set_f1_all"]["value"] == pytest.approx((1 + 2 / 3 + 1 + 1) / 4)
    assert m["pair_acc_own_ko"]["value"] == pytest.approx(5 / 16)  # 5 APPEND pairs of 16
    # derived gold ops of 901 S2 -> S3: both m dropped, both s kept -> REPLACE for all 4 pairs
    assert m["op_replace"]["value"] == 1.0 and m["op_replace"]["n"] == 4
    assert m["op_append"]["predicted"] == 1.0


def test_cv_scores_each_episode_with_thresholds_fit_on_the_other_fold(real_data_dir, llm, embedder):
    eps = carecall.load(real_data_dir)
    protocol = MemoryOpsProtocol(fit="cv", folds=2, pair_sources=())
    protocol.prepare(eps)
    ids = sorted(e.episode_id for e in eps)
    assert [f["test_episodes"] for f in protocol.fits] == [ids[0::2], ids[1::2]]
    method = _method(llm, embedder, "charngram")
    for fit in protocol.fits:
        ep = next(e for e in eps if e.episode_id == fit["test_episodes"][0])
        preds = protocol.run_episode(ep, method, llm).predictions
        assert all(p.meta["charngram"] == fit["thresholds"] for p in preds)


def test_pairs_a_rule_was_fit_on_are_never_scored(llm, embedder):
    protocol = MemoryOpsProtocol(fit="none", pair_sources=("table7", "own_en"))
    english = protocol.run_extra(lambda: _method(llm, embedder, "english"), llm)
    table7 = [p for p in english if p.meta["source"] == "table7"]
    assert len(table7) == 14 and all(p.meta["excluded"] and p.output == "" for p in table7)
    _, summary = score_memory_ops(english)
    assert "value" not in summary["metrics"]["pair_acc_table7"]  # shown as n/a
    assert summary["metrics"]["pair_acc_table7"]["n_excluded"] == 14
    assert summary["metrics"]["pair_acc_own_en"]["n"] == 10
    char = protocol.run_extra(lambda: _method(llm, embedder, "charngram"), llm)
    assert not any(p.meta["excluded"] for p in char)  # fit on CareCall transitions, not pairs


def test_an_llm_is_not_scored_on_the_prompts_own_examples(llm, embedder):
    protocol = MemoryOpsProtocol(fit="none", pair_sources=("table7",))
    updater = _method(llm, embedder, "auto").updater
    online = SimpleNamespace(backend=SimpleNamespace(offline=False))
    why = [protocol.held_out(p, updater, online) for p in memory_pairs.load("table7")]
    # Fig. 25 shows 4 of Table 7's pairs (Not sick, back surgery, gym, sore throat)
    assert sum(w is not None for w in why) == 4


def test_bad_settings_and_methods_without_an_updater(llm, embedder, episodes):
    with pytest.raises(ConfigError, match="fit 'loo'"):
        MemoryOpsProtocol(fit="loo")
    with pytest.raises(KeyError, match="own_fr"):
        MemoryOpsProtocol(pair_sources=("own_fr",))
    with pytest.raises(ConfigError, match="needs a memory method with a memory updater"):
        MemoryOpsProtocol(fit="none").run_episode(episodes[0], NoMemory(llm, embedder), llm)


def test_pair_loader_names_file_line_and_expectation(tmp_path):
    bad = tmp_path / "mine.jsonl"
    bad.write_text(
        '{"memory": "a", "summary": "b", "label": "PASS"}\n{"memory": "a", "summary": "b", "label": "MERGE"}\n'
    )
    with pytest.raises(
        DatasetFormatError, match=r"mine.jsonl line 2: label 'MERGE' should be one of"
    ):
        memory_pairs.load(path=bad)
    bad.write_text('{"memory": "", "summary": "b", "label": "PASS"}\n')
    with pytest.raises(DatasetFormatError, match="line 1: 'memory' should be a non-empty string"):
        memory_pairs.load(path=bad)
    assert {len(memory_pairs.load(s)) for s in ("table7",)} == {14}


def test_a_runs_pairs_reach_the_embedder_in_one_call_and_score_the_same(episodes, llm):
    # issue 55 item 7: every episode's pairs and the held-out labelled ones in the first
    # episode's call (they used to go one call per episode and per pair source)
    from recallbench.testing.embedders import RecordingEmbedder

    protocol = MemoryOpsProtocol(fit="none", pair_sources=("own_en",))
    batched = RecordingEmbedder(dim=256)
    preds = _run(protocol, episodes, _method(llm, batched, "english"), llm)
    assert len(batched.calls) == 1 and len(set(batched.sent)) == len(batched.sent)
    one_by_one = RecordingEmbedder(dim=256)  # no prepare: each episode's pairs as it comes
    method = _method(llm, one_by_one, "english")
    alone = [
        p
        for ep in episodes
        for p in MemoryOpsProtocol(fit="none", pair_sources=("own_en",))
        .run_episode(ep, method, llm)
        .predictions
    ]
    alone += protocol.run_extra(lambda: method, llm)
    assert len(one_by_one.calls) > 1 and set(one_by_one.sent) == set(batched.sent)
    assert [(p.pred_id, p.output, p.meta.get("labels")) for p in preds] == [
        (p.pred_id, p.output, p.meta.get("labels")) for p in alone
    ]
