"""Protocol ``longmemeval_qa``: the authors' retrieval metrics, accuracy aggregation, replay."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import numpy as np
import pytest
from omegaconf import OmegaConf

from recallbench import CONF_DIR
from recallbench.cli.build import build_judge, build_memory_factory
from recallbench.datasets.longmemeval import load
from recallbench.embed.hashing import HashingEmbedder
from recallbench.llm import build_llm
from recallbench.protocols.longmemeval import (
    READ_PROMPT,
    Gold,
    LongMemEvalQAProtocol,
    dcg,
    gold_of,
    question_metrics,
    score_longmemeval,
)
from recallbench.testing.configs import load_group_config

MEASURES = ("recall_any", "recall_all", "ndcg_any")
REFERENCE = Path("longmemeval") / "reference" / "eval_utils.py"


def _reference_utils(real_data_dir):
    path = real_data_dir / REFERENCE
    if not path.exists():
        pytest.skip("the authors' eval_utils.py is not in the data dir")
    if not hasattr(np, "asfarray"):  # removed in numpy 2; the reference calls it
        np.asfarray = lambda a: np.asarray(a, dtype=float)  # type: ignore[attr-defined]
    spec = importlib.util.spec_from_file_location("lme_eval_utils", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _flat_index(sessions, granularity):
    """``process_item_flat_index`` of run_retrieval.py, written again from its text (ids only)."""
    ids = []
    for sid, turns in sessions:
        if granularity == "session":
            users = [t for t in turns if t["role"] == "user"]
            no_target = all(not t.get("has_answer", False) for t in users)
            ids.append(sid.replace("answer", "noans") if "answer" in sid and no_target else sid)
            continue
        for n, turn in enumerate(turns, start=1):
            if turn["role"] != "user":
                continue
            tid = f"{sid}_{n}"
            if "answer" in sid and not turn["has_answer"]:
                tid = tid.replace("answer", "noans")
            ids.append(tid)
    return ids


def _random_instance(rng: random.Random):
    sessions = []
    for j in range(rng.randint(2, 9)):
        answer = rng.random() < 0.35
        sid = (
            f"answer_{j:04x}ab" if answer else rng.choice(["sharegpt", "ultrachat", "x"]) + f"_{j}c"
        )
        turns = []
        for n in range(rng.randint(1, 8)):
            role = "user" if n % 2 == 0 else "assistant"
            turn = {"role": role, "content": f"turn {n}"}
            if answer:
                turn["has_answer"] = rng.random() < 0.3
            turns.append(turn)
        sessions.append((sid, turns))
    return sessions


def _episode_of(sessions):
    from recallbench.records import Episode, Session, Turn

    out = []
    for i, (sid, turns) in enumerate(sessions, start=1):
        made = []
        for n, t in enumerate(turns, start=1):
            labels = {"role": t["role"], "lme_id": f"{sid}_{n}", "lme_session": sid}
            if "has_answer" in t:
                labels["has_answer"] = t["has_answer"]
            made.append(Turn(f"e/{sid}_{n}", t["role"], t["content"], labels))
        out.append(Session(f"e/{sid}", i, None, tuple(made)))
    return Episode("e", "longmemeval", ("user", "assistant"), tuple(out))


def test_metrics_equal_the_authors_eval_utils(real_data_dir):
    ref = _reference_utils(real_data_dir)
    rng = random.Random(7)
    checked = 0
    for _ in range(300):
        sessions = _random_instance(rng)
        gold = gold_of(_episode_of(sessions))
        for granularity in ("session", "turn"):
            corpus = _flat_index(sessions, granularity)
            if not corpus:
                continue
            correct = list({c for c in corpus if "answer" in c})
            order = list(range(len(corpus)))
            rng.shuffle(order)
            # a method ranks all or a prefix of the corpus; it records the release's raw ids
            cut = rng.choice([len(order), rng.randint(1, len(order))])
            ranking = order[:cut]
            raw = [corpus[i].replace("noans", "answer") for i in ranking]
            sess_raw = ["_".join(r.split("_")[:-1]) for r in raw] if granularity == "turn" else raw
            ours = question_metrics(sess_raw, raw, granularity, gold)
            rest = [i for i in range(len(corpus)) if i not in ranking]
            # the unranked tail after the ranked ids, irrelevant ones first: a method that
            # stopped early (module docstring of _retrieval)
            padded = ranking + sorted(rest, key=lambda i: corpus[i] in correct)
            level = "session" if granularity == "session" else "turn"
            for k in (5, 10) if granularity == "session" else (5, 10, 50):
                if any(i not in ranking and corpus[i] in correct for i in padded[:k]):
                    continue  # the reference would credit an id the method never ranked
                want = ref.evaluate_retrieval(padded, correct, corpus, k)
                got = tuple(ours[f"{level}_{m}@{k}"] for m in MEASURES)
                assert got == pytest.approx(want), (granularity, k, sessions, ranking)
                checked += 1
                if granularity == "turn" and k in (5, 10) and cut == len(corpus):
                    want2 = ref.evaluate_retrieval_turn2session(padded, correct, corpus, k)
                    got2 = tuple(ours[f"session_{m}@{k}"] for m in MEASURES)
                    assert got2 == pytest.approx(want2), (k, sessions, ranking)
                    checked += 1
    assert checked > 500


def test_dcg_does_not_discount_rank_two():
    # the authors' DCG: rel[0] + rel[1]/log2(2) + rel[2]/log2(3) ...
    assert dcg([0, 1], 2) == 1.0
    assert dcg([0, 0, 1], 3) == pytest.approx(1 / np.log2(3))
    assert dcg([], 5) == 0.0


def test_hand_checked_values_on_the_fixture(fixtures_dir):
    episode = load(fixtures_dir, "s", questions="fx000002")[0]
    gold = gold_of(episode)
    # answer_fx0b1: user turns 1 (no), 3 (yes); answer_fx0b2: user turn 1 (yes); fxd3_1, sharegpt
    assert gold == Gold(
        ("answer_fx0b1", "answer_fx0b2"),
        ("answer_fx0b1_3", "answer_fx0b2_1"),
        4,
        5,
        True,
    )
    # session ranking: a distractor, then answer_fx0b2, answer_fx0b1
    got = question_metrics(["fxd3_1", "answer_fx0b2", "answer_fx0b1"], [], "session", gold)
    assert got["session_recall_any@5"] == 1.0 and got["session_recall_all@5"] == 1.0
    ideal = 1 + 1  # two relevant: 1 + 1/log2(2)
    assert got["session_ndcg_any@5"] == pytest.approx((1 + 1 / np.log2(3)) / ideal)
    assert "turn_recall_any@5" not in got
    # turn ranking: the non-evidence user turn of answer_fx0b1 (noans), then an evidence turn
    turns = ["answer_fx0b1_1", "answer_fx0b2_1", "fxd3_1_1"]
    got = question_metrics([], turns, "turn", gold)
    assert got["turn_recall_any@5"] == 1.0 and got["turn_recall_all@5"] == 0.0
    assert got["turn_ndcg_any@5"] == pytest.approx(1.0 / 2.0)  # 1/log2(2) of ideal 2
    # turn-to-session: sessions noans_fx0b1, answer_fx0b2, fxd3_1 (3 < 5 distinct: k grows past
    # the corpus), so the relevant answer_fx0b1 was never ranked
    assert got["session_recall_any@5"] == 1.0 and got["session_recall_all@5"] == 0.0


@pytest.fixture(scope="module")
def llm():
    return build_llm({"backend": "extractive"})


JUDGE = {
    "_target_": "recallbench.judges.longmemeval.LongMemEvalJudge",
    "name": "longmemeval",
    "generator": None,
}


def _protocol(llm, **overrides):
    node = OmegaConf.to_container(OmegaConf.load(CONF_DIR / "protocol" / "longmemeval_qa.yaml"))
    params = {k: v for k, v in node.items() if k not in ("_target_", "name", "metrics", "judge")}
    return LongMemEvalQAProtocol(judge=build_judge(JUDGE, llm=llm), **{**params, **overrides})


def _method(llm, name):
    node = load_group_config(CONF_DIR / "memory" / f"{name}.yaml")
    return build_memory_factory(node, llm, HashingEmbedder())()


def test_replay_records_ranking_and_scores(fixtures_dir, llm):
    protocol = _protocol(llm)
    predictions = []
    for episode in load(fixtures_dir, "s"):
        predictions += protocol.run_episode(
            episode, _method(llm, "memory_retrieval"), llm
        ).predictions
    answers = [p for p in predictions if p.kind == "answer"]
    assert [p.meta["question_id"] for p in answers] == ["fx000001", "fx000002"]
    first = answers[0]
    assert first.meta["retrieval"]["granularity"] == "turn"
    assert set(first.meta["retrieval"]["sessions"]) <= {
        "answer_fx0g1",
        "sharegpt_fxd1",
        "ultrachat_fxd2",
    }
    assert all(t.count("_") >= 2 for t in first.meta["retrieval"]["turns"])
    assert "judge" in first.meta and first.meta["judge"]["judge"] == "longmemeval"
    scores, summary = protocol.score(predictions)
    metrics = summary["metrics"]
    assert metrics["accuracy"]["n"] == 2
    # the default errata list no fixture question: both are clean
    assert set(metrics["accuracy"]["subsets"]) == {"single-session-user", "multi-session", "clean"}
    assert metrics["accuracy"]["subsets"]["clean"]["n"] == 2
    assert summary["errata"]["source"] == "default" and summary["errata"]["flagged_in_run"] == []
    assert metrics["session_recall_any@5"]["n"] == 2
    per_q = {s.pred_id: s.value for s in scores if s.metric == "accuracy"}
    assert metrics["accuracy"]["value"] == pytest.approx(sum(per_q.values()) / 2)


def test_errata_flag_a_question_out_of_clean_without_rewriting_its_key(fixtures_dir, llm, tmp_path):
    mine = tmp_path / "mine.yaml"
    mine.write_text(
        "errata:\n  - {question_id: fx000002, field: answer, applies: true, score_changing: true,"
        " thread: t, data: d, sources: [x]}\n"
    )
    episodes = load(fixtures_dir, "s")
    runs = {}
    for errata in (None, str(mine)):
        protocol = _protocol(llm, errata=errata)
        predictions = []
        for episode in episodes:
            method = _method(llm, "memory_retrieval")
            predictions += protocol.run_episode(episode, method, llm).predictions
        runs[errata] = (predictions, protocol.score(predictions)[1])
    (plain, plain_summary), (flagged, summary) = runs[None], runs[str(mine)]
    assert "errata" not in plain_summary
    assert "clean" not in plain_summary["metrics"]["accuracy"]["subsets"]
    assert summary["metrics"]["accuracy"]["subsets"]["clean"]["n"] == 1
    assert summary["errata"]["flagged_in_run"] == ["fx000002"]
    answers = {p.meta["question_id"]: p for p in flagged if p.kind == "answer"}
    assert answers["fx000002"].meta["erratum"]["score_changing"] is True
    assert answers["fx000002"].meta["erratum"]["error_type"] == "answer (applies)"
    assert "erratum" not in answers["fx000001"].meta
    # nothing but the subsets and the erratum changes: same references and verdicts
    before = {p.meta["question_id"]: p for p in plain if p.kind == "answer"}
    for qid, p in answers.items():
        assert p.reference == before[qid].reference
        assert p.meta["judge"]["label"] == before[qid].meta["judge"]["label"]


def test_full_history_records_no_ranking_and_reads_the_date(fixtures_dir, llm):
    protocol = _protocol(llm, reading="direct")
    episode = load(fixtures_dir, "oracle", questions="fx000002")[0]
    result = protocol.run_episode(episode, _method(llm, "full_history"), llm)
    answer = next(p for p in result.predictions if p.kind == "answer")
    assert "retrieval" not in answer.meta
    assert "retrieval_gold" in answer.meta
    fields = {"memory": "M", "date": "2023/07/10 (Mon) 20:00", "question": "Q?"}
    text = protocol.task.render(**fields)[0]["content"]
    assert text == READ_PROMPT.format(**fields)
    assert text.endswith("Current Date: 2023/07/10 (Mon) 20:00\nQuestion: Q?\nAnswer:")


def test_task_averaged_is_the_mean_of_type_accuracies(fixtures_dir, llm):
    protocol = _protocol(llm)
    predictions = []
    for episode in load(fixtures_dir, "oracle"):
        predictions += protocol.run_episode(
            episode, _method(llm, "memory_retrieval"), llm
        ).predictions
    _, summary = score_longmemeval(predictions)
    metrics = summary["metrics"]
    per_type = [
        v["value"]
        for k, v in metrics["accuracy"]["subsets"].items()
        if k not in ("abstention", "clean")
    ]
    assert len(per_type) == 4
    assert metrics["task_averaged"]["value"] == pytest.approx(sum(per_type) / 4)
    # abstention: scored for accuracy, never for retrieval
    assert metrics["accuracy"]["subsets"]["abstention"]["n"] == 1
    assert metrics["session_recall_any@5"]["n"] <= 2  # fx000003's evidence is an assistant turn


def test_chain_of_note_reads_notes(fixtures_dir, llm):
    from recallbench.records import Query

    protocol = _protocol(llm, reading="con_separate")
    episode = load(fixtures_dir, "s", questions="fx000001")[0]
    method = _method(llm, "memory_retrieval")
    method.reset(episode)
    for session in episode.sessions:
        method.observe(session)
    question = episode.qa[0].question
    recall = method.recall(Query(episode.episode_id, 3, (), "user", None, question))
    assert recall.items
    fields = {"date": "2023/06/02 (Fri) 09:15", "question": question}
    notes = protocol._notes(recall, fields, llm)
    assert notes.startswith("\n### Session 1:\nSession Date: ")
    assert notes.count("### Session") == len(recall.items)
    # the offline note is the chunk when it shares a word with the question, else "empty"
    assert '{"session_summary": "user: I finally planted the tomato seedlings' in notes
    assert '{"session_summary": "empty"}' in notes
    result = protocol.run_episode(episode, _method(llm, "memory_retrieval"), llm)
    answer = next(p for p in result.predictions if p.kind == "answer")
    assert answer.meta["question_type"] == "single-session-user"


@pytest.mark.parametrize("name", ["naive_rag", "memorybank"])
def test_the_lufy_family_remembers_the_users_turns(fixtures_dir, llm, name):
    """LongMemEval's user speaks first, so the replier is the assistant: the LUFY family's
    utterance pairs are keyed on the user's turns, and their ranking reaches the turn level."""
    episode = load(fixtures_dir, "s", questions="fx000001")[0]
    roles = {t.turn_id: t.labels["role"] for s in episode.sessions for t in s.turns}
    method = _method(llm, name)
    answer = next(
        p
        for p in _protocol(llm).run_episode(episode, method, llm).predictions
        if p.kind == "answer"
    )
    assert method.store.user == "user"
    pairs = [e for e in method.store.entries if e.kind == "utterance_pair"]
    assert all(roles[e.source_ids[0]] == "user" for e in pairs)
    if name == "naive_rag":  # nothing forgotten: every pair is there, and ranked
        assert pairs and answer.meta["retrieval"]["turns"]
