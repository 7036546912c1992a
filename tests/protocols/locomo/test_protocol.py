"""Protocol ``locomo_qa`` on the fixture: asking, category-5 options, summary per category."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from omegaconf import OmegaConf

from recallbench import CONF_DIR
from recallbench.cli.build import build_judge, build_memory_factory
from recallbench.datasets.locomo import load, question_sha1
from recallbench.embed.hashing import HashingEmbedder
from recallbench.judges import JudgeItem
from recallbench.judges.mem0_j import ACCURACY_PROMPT, J_TASK, parse_j_label
from recallbench.llm import build_llm
from recallbench.llm.task import ParseError
from recallbench.protocols.locomo import (
    LocomoQAProtocol,
    ask_session,
    choice_answer,
    options_for,
    score_locomo,
)
from recallbench.records import Prediction
from recallbench.testing.configs import load_group_config


@pytest.fixture(scope="module")
def episodes(fixtures_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load(fixtures_dir)


@pytest.fixture(scope="module")
def llm():
    return build_llm({"backend": "extractive"})


JUDGE = {"_target_": "recallbench.judges.mem0_j.Mem0JJudge", "name": "mem0_j", "generator": None}


def _protocol(llm, **overrides):
    node = OmegaConf.to_container(OmegaConf.load(CONF_DIR / "protocol" / "locomo_qa.yaml"))
    params = {k: v for k, v in node.items() if k not in ("_target_", "name", "metrics", "judge")}
    return LocomoQAProtocol(judge=build_judge(JUDGE, llm=llm), **{**params, **overrides})


def _method(llm):
    node = load_group_config(CONF_DIR / "memory" / "naive_rag.yaml")
    return build_memory_factory(node, llm, HashingEmbedder())()


def test_j_prompt_is_mem0s_and_parses_json_labels():
    assert ACCURACY_PROMPT.startswith("\nYour task is to label an answer")
    assert ACCURACY_PROMPT.rstrip().endswith('in a json format with the key as "label".')
    text = J_TASK.render(question="Q?", label_answer="G", answer_to_judge="A")[0]["content"]
    assert "Question: Q?\nGold answer: G\nGenerated answer: A\n" in text
    assert parse_j_label('{"label": "CORRECT"}') == 1
    assert parse_j_label('The dates match. {"label": "WRONG"}') == 0
    for bad in ("CORRECT", '{"label": "correct"}', '{"verdict": "CORRECT"}'):
        with pytest.raises(ParseError):
            parse_j_label(bad)


def test_j_offline_twin_goes_through_the_parser(llm):
    judge = build_judge(JUDGE, llm=llm)
    verdicts = judge.judge_many(
        [
            JudgeItem("Where did Dev move?", "Oslo", "He moved to Oslo."),
            JudgeItem("Q?", "Oslo", "Rome"),
        ]
    )
    assert [(v.label, v.raw) for v in verdicts] == [
        (1, '{"label": "CORRECT"}'),
        (0, '{"label": "WRONG"}'),
    ]
    assert "lexical" in judge.describe()["note"]


def test_choice_answer_and_options(episodes):
    bait = episodes[0].qa[10]
    opts = options_for(bait)
    assert opts == options_for(bait) and set(opts.values()) == {
        "Not mentioned in the conversation",
        "Pixel",
    }
    assert choice_answer("(a)", {"a": "x", "b": "y"}) == "x"
    assert choice_answer("b", {"a": "x", "b": "y"}) == "y"
    assert choice_answer("Pixel, his dog", {"a": "x", "b": "y"}) == "pixel, his dog"


def test_ask_after_last_or_evidence(episodes):
    qa = episodes[0].qa
    assert ask_session(qa[0], "last", 2) == 2
    assert ask_session(qa[0], "evidence", 2) == 1  # D1:2, D1:4
    assert ask_session(qa[5], "evidence", 2) == 2  # D1:1 and D2:2
    assert ask_session(qa[9], "evidence", 2) == 2  # no evidence: after the last session


def test_run_scores_every_question_once_per_category(episodes, llm):
    protocol = _protocol(llm, ask_after="evidence")
    preds = []
    for ep in episodes:
        preds += protocol.run_episode(ep, _method(llm), llm).predictions
    answers = [p for p in preds if p.kind == "answer"]
    assert len(answers) == sum(len(e.qa) for e in episodes)
    first = {p.meta["qa_id"]: p for p in answers}["locomo/conv-1/q0"]
    assert first.session_index == 1 and first.meta["subsets"] == ["multi_hop", "answerable"]
    bait = [p for p in answers if p.meta["category"] == 5]
    assert all("judge" not in p.meta for p in bait)  # Mem0 does not judge category 5
    assert all(p.output in p.meta["options"].values() for p in bait)
    scores, summary = protocol.score(preds, ["f1", "j", "recall_at_5"])
    f1 = summary["metrics"]["f1"]
    assert f1["n"] == len(answers) and summary["metrics"]["j"]["n"] == len(answers) - len(bait)
    names = {"adversarial", "answerable", "multi_hop", "open_domain", "single_hop", "temporal"}
    assert set(f1["subsets"]) == names
    by_id = {(s.pred_id, s.metric): s.value for s in scores}
    sub = f1["subsets"]["adversarial"]
    assert sub["value"] == pytest.approx(sum(by_id[(p.pred_id, "f1")] for p in bait) / len(bait))
    assert summary["judge"]["name"] == "mem0_j" and summary["judge"]["parse_failures"] == 0
    with pytest.raises(KeyError, match="f1"):
        protocol.score(preds, ["f11"])


def _answer(episode, qa_id, category, output, reference, evidence, recalled, label=None):
    subsets = ["single_hop", "answerable"] if category == 4 else ["adversarial"]
    meta = {"qa_id": qa_id, "category": category, "evidence": evidence}
    meta |= {"recalled_sources": recalled, "subsets": subsets}
    if label is not None:
        meta["judge"] = {"label": label, "failure": None}
    return Prediction(qa_id, episode, 2, "answer", "h", output, reference, meta=meta)


def test_summary_values_by_hand():
    preds = [
        _answer("e1", "e1/q0", 4, "a red kite", "red kite in the sky", ["t1"], [["t1"]], 1),
        _answer("e1", "e1/q1", 5, "Not mentioned in the conversation", "x", ["t2"], [["t3"]]),
        _answer("e2", "e2/q0", 4, "Oslo", "Oslo", ["t4", "t5"], [["t9"], ["t4"]], 0),
    ]
    _, summary = score_locomo(preds)
    m = summary["metrics"]
    assert m["f1"]["value"] == pytest.approx((2 / 3 + 1 + 1) / 3)
    assert m["f1"]["subsets"]["single_hop"]["value"] == pytest.approx((2 / 3 + 1) / 2)
    assert m["f1"]["subsets"]["adversarial"]["value"] == 1.0
    assert m["j"]["value"] == 0.5 and m["j"]["n"] == 2
    assert m["recall_at_5"]["value"] == pytest.approx((1 + 0 + 0.5) / 3)
    assert m["f1"]["n_clusters"] == 2 and "bootstrap" in m["f1"]


def _under_errata(pred, erratum=None, key=None):
    meta = {**pred.meta, "errata": ["default", "locomo_audit"]}
    if erratum is not None:
        meta["erratum"] = erratum
    if key is not None:
        meta["judge"] = {**meta["judge"], "key": key}
    return Prediction(
        pred.pred_id, pred.episode_id, 2, "answer", "h", pred.output, pred.reference, meta=meta
    )


def test_a_question_without_a_usable_key_has_no_f1_or_b1_but_keeps_its_verdict():
    """An erratum's ``no_key`` (the audit's correction is a remark): F1, B1, Mem0's F1 and
    ceiling_f1 leave the question out; J keeps it, and the flag keeps it out of clean."""
    remark = {"old": "Lisbon", "new": True, "source": "locomo_audit: AMBIGUOUS (q)"}
    no_key = {"fields": {"no_key": remark}, "score_changing": True, "sources": ["locomo_audit"]}
    preds = [
        _under_errata(_answer("e1", "e1/q0", 4, "red kite", "red kite", ["t1"], [["t1"]], 1)),
        _under_errata(_answer("e2", "e2/q0", 4, "Lisbon", "Lisbon", ["t4"], [["t4"]], 1), no_key),
    ]
    scores, summary = score_locomo(preds)
    m = summary["metrics"]
    assert {s.metric for s in scores if s.pred_id == preds[1].pred_id} == {
        "j",
        "ceiling",
        "recall_at_5",
        "recall_at_10",
        "evidence_recall",
    }
    assert (m["f1"]["n"], m["b1"]["n"], m["f1_mem0"]["n"], m["ceiling_f1"]["n"]) == (1, 1, 1, 1)
    assert (m["j"]["n"], m["j"]["value"]) == (2, 1.0)
    assert m["j"]["subsets"]["clean"]["n"] == 1 and m["ceiling"]["value"] == 0.5
    assert summary["errata"]["no_key"] == 1


def test_errata_clean_subset_ceiling_and_release_key_verdicts():
    fixed = {"old": "Lisbon", "new": "Oslo", "source": "locomo_audit: TEMPORAL_ERROR"}
    line = "e2/q0 answer: default gives 'Oslo', locomo_audit gives 'Bergen'; used default"
    changing = {"fields": {"answer": fixed}, "score_changing": True, "sources": ["locomo_audit"]}
    changing["conflicts"] = [line]
    recall_only = {"fields": {}, "score_changing": False, "sources": ["locomo_audit"]}
    preds = [
        _under_errata(_answer("e1", "e1/q0", 4, "red kite", "red kite", ["t1"], [["t1"]], 1)),
        _under_errata(_answer("e1", "e1/q1", 5, "Not mentioned in the conversation", "x", [], [])),
        _under_errata(
            _answer("e2", "e2/q0", 4, "Oslo", "Oslo", ["t4"], [["t4"]], 0), changing, "release"
        ),
        _under_errata(_answer("e2", "e2/q1", 4, "pottery", "pottery", ["t5"], [], 1), recall_only),
    ]
    _, summary = score_locomo(preds)
    m = summary["metrics"]
    clean = m["j"]["subsets"]["clean"]  # e2/q0 is flagged; category 5 is never clean
    assert (clean["value"], clean["n"]) == (1.0, 2)
    assert m["f1"]["subsets"]["clean"]["n"] == 2 and m["j"]["value"] == pytest.approx(2 / 3)
    assert m["ceiling"]["value"] == pytest.approx(2 / 3) and m["ceiling"]["n"] == 3
    assert m["ceiling_f1"]["value"] == pytest.approx(2 / 3)  # "Oslo" against "Lisbon": F1 0
    assert m["j"]["key"].startswith("1 verdicts judged against the release's answer")
    assert summary["errata"] == {
        "sources": ["default", "locomo_audit"],
        "corrected_or_flagged": 2,
        "score_changing": 1,
        "clean": 2,
        "no_key": 0,
        "conflicts": [line],
        "release_key_verdicts": 1,
    }
    # the same predictions without errata: no clean subset, no ceiling, no errata block
    plain = [
        Prediction(
            p.pred_id,
            p.episode_id,
            2,
            "answer",
            "h",
            p.output,
            p.reference,
            meta={k: v for k, v in p.meta.items() if k not in ("errata", "erratum")},
        )
        for p in preds
    ]
    _, summary = score_locomo(plain)
    assert (
        "clean" not in summary["metrics"]["j"]["subsets"] and "key" not in summary["metrics"]["j"]
    )
    assert "ceiling" not in summary["metrics"] and "errata" not in summary


def test_a_run_under_errata_carries_them_to_its_summary(fixtures_dir, llm, tmp_path):
    q1 = load(fixtures_dir, conversations="conv-1")[0].qa[1]
    errata = tmp_path / "e.yaml"
    errata.write_text(
        "errata:\n"
        f"  - {{sample_id: conv-1, question_sha1: {question_sha1(q1.question)}, field: answer,\n"
        f"     old_sha1: {question_sha1(q1.answers[0])}, new: 19 March 2023, source: t}}\n",
        encoding="utf-8",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (ep,) = load(fixtures_dir, conversations="conv-1", errata=str(errata))
    protocol = _protocol(llm)
    preds = protocol.run_episode(ep, _method(llm), llm).predictions
    item = {p.meta.get("qa_id"): p for p in preds}["locomo/conv-1/q1"]
    assert item.reference == "19 March 2023" and item.meta["errata"] == ["e.yaml"]
    _, summary = protocol.score(preds)
    answerable = summary["metrics"]["j"]["subsets"]["answerable"]["n"]
    assert summary["metrics"]["j"]["subsets"]["clean"]["n"] == answerable - 1
    assert summary["errata"]["score_changing"] == 1


def test_every_stage_is_timed_per_question_and_summarized(episodes, llm):
    protocol = _protocol(llm)
    preds = protocol.run_episode(episodes[0], _method(llm), llm).predictions
    answers = [p for p in preds if p.kind == "answer"]
    memory = [p for p in preds if p.kind == "memory"]
    assert all(p.meta["recall_s"] > 0 and p.meta["generate_s"] > 0 for p in answers)
    # the extractive backend measures each call: its latency is the answer stage's
    assert {p.meta["generate_timed"] for p in answers} == {"call"}
    assert all(p.meta["generate_s"] == p.usage["latency_s"] for p in answers)
    assert len(memory) == len(episodes[0].sessions) and all(p.meta["observe_s"] > 0 for p in memory)
    _, summary = protocol.score(preds)
    latency = summary["latency"]
    totals = sorted(p.meta["recall_s"] + p.meta["generate_s"] for p in answers)
    assert latency["total"]["n"] == len(answers)
    assert latency["total"]["p50"] == pytest.approx(float(np.median(totals)), abs=2e-6)
    assert totals[0] <= latency["search"]["p50"] + latency["answer"]["p95"]
    assert latency["search"]["p50"] <= latency["search"]["p95"]
    assert latency["memory_construction"]["n"] == len(memory)
    assert "not comparable" in latency["note"]
    untimed = [
        Prediction(
            p.pred_id,
            p.episode_id,
            p.session_index,
            p.kind,
            "h",
            p.output,
            p.reference,
            meta={k: v for k, v in p.meta.items() if not k.endswith("_s")},
        )
        for p in preds
    ]
    assert "latency" not in score_locomo(untimed)[1]  # an untimed run gets no zeros


def test_a_cache_hit_takes_its_batch_share_not_its_recorded_latency():
    from recallbench.protocols.locomo._protocol import _generate_timing

    assert _generate_timing(1.5, False, 0.01) == {"generate_s": 1.5, "generate_timed": "call"}
    assert _generate_timing(1.5, True, 0.01) == {
        "generate_s": 0.01,
        "generate_timed": "batch_share",
    }
    assert _generate_timing(0.0, False, 0.02)["generate_timed"] == "batch_share"
