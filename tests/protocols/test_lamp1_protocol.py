"""The ``lamp1`` protocol (TimeRAG-Memory Table VII on the real LaMP-1 task)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from recallbench.cli.build import build_embedder
from recallbench.datasets import lamp1
from recallbench.errors import ConfigError
from recallbench.llm import build_llm
from recallbench.memory.full_history import FullHistory
from recallbench.memory.no_memory import NoMemory
from recallbench.protocols.lamp1 import LaMP1Protocol, cross_fit, features, macro_f1
from recallbench.testing.embedders import RecordingEmbedder

TOPICS = Path(__file__).resolve().parents[2] / "data" / "fixtures" / "lamp1_topics"
HASHING = {"kind": "hashing", "dim": 512}


def test_features_are_reference_one_minus_reference_two_similarities():
    e = np.eye(3)
    title, ref1, ref2 = e[0], e[1], e[2]
    profile = np.array([e[1], (e[1] + e[2]) / np.sqrt(2)])
    # mean of the profile rows = (1 + 1/sqrt2, 1/sqrt2)/2 in (e1, e2), normalised
    mean = np.array([0, 1 + 1 / np.sqrt(2), 1 / np.sqrt(2)])
    mean /= np.linalg.norm(mean)
    got = features(title, ref1, ref2, profile)
    assert got[0] == pytest.approx(mean[1] - mean[2])
    assert got[1] == pytest.approx(1.0 - 1 / np.sqrt(2))  # best item: 1 vs 1/sqrt2
    assert got[2] == 0.0
    assert features(title, ref1, ref2, np.zeros((0, 3)))[:2] == [0.0, 0.0]


def test_macro_f1_by_hand():
    # label 0: P 1, R 1/2 -> 2/3; label 1: P 2/3, R 1 -> 4/5; mean 11/15
    assert macro_f1([0, 0, 1, 1], [0, 1, 1, 1]) == pytest.approx(11 / 15)


def test_cross_fit_predicts_each_fold_with_a_model_that_never_saw_it():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 1))
    y = (x[:, 0] > 0).astype(int)
    assert (cross_fit(x, y, folds=5, c=1.0, seed=0) == y).mean() >= 0.9
    # labels a model could only know by having seen the row: chance, not memorised
    noise = rng.integers(0, 2, size=40)
    assert (cross_fit(x, noise, folds=5, c=1.0, seed=0) == noise).mean() < 0.8


@pytest.fixture(scope="module")
def questions():
    return lamp1.load(TOPICS, split="dev")


def _replay(protocol, method_of, questions, llm):
    """What the runner does: prepare, every episode, then finish (before writing and scoring)."""
    protocol.prepare(questions)
    preds = []
    for episode in questions:
        preds += protocol.run_episode(episode, method_of(), llm).predictions
    return protocol.finish(preds)


def _accuracy(method_cls, questions) -> float:
    llm = build_llm({"backend": "extractive"}, cache_path=None)
    embedder = build_embedder(HASHING)
    protocol = LaMP1Protocol(embedder=embedder)
    preds = _replay(protocol, lambda: method_cls(llm, embedder), questions, llm)
    _, summary = protocol.score(preds, ["accuracy", "macro_f1"])
    assert summary["metrics"]["accuracy"]["n"] == len(questions) == 50
    return summary["metrics"]["accuracy"]["value"]


def test_a_memory_that_keeps_the_profile_beats_none_on_the_topic_fixture(questions):
    # the fixture's titles mix the user's topic with another: only the profile disambiguates
    without = _accuracy(NoMemory, questions)
    with_profile = _accuracy(FullHistory, questions)
    assert with_profile >= without + 0.2


def test_a_question_without_the_standard_input_is_named(questions):
    episode = questions[0]
    bare = episode.qa[0].__class__(**{**episode.qa[0].__dict__, "meta": {}})
    broken = episode.__class__(**{**episode.__dict__, "qa": (bare,)})
    llm = build_llm({"backend": "extractive"}, cache_path=None)
    protocol = LaMP1Protocol(embedder=HASHING)
    with pytest.raises(ConfigError, match=f"question {bare.qa_id}"):
        protocol.run_episode(broken, NoMemory(llm, build_embedder(HASHING)), llm)


def test_protocol_needs_an_embedder_config():
    with pytest.raises(ConfigError, match="protocol.embedder"):
        LaMP1Protocol(embedder=None)


class _Recorder(FullHistory):
    """Full history that keeps the queries it was asked to recall."""

    asked: list = []

    def recall(self, query):
        _Recorder.asked.append(query)
        return super().recall(query)


def test_the_features_texts_are_encoded_in_two_calls_for_the_run_not_one_per_question(questions):
    # issue 55 item 7: titles and references before the replay, recalled profiles after it
    llm = build_llm({"backend": "extractive"}, cache_path=None)
    recording = RecordingEmbedder(dim=512)
    protocol = LaMP1Protocol(embedder=recording)
    memory_embedder = build_embedder(HASHING)  # the method's own: not the protocol's calls
    preds = _replay(protocol, lambda: FullHistory(llm, memory_embedder), questions, llm)
    assert len(preds) == 50 and len(recording.calls) == 2
    fixed = {
        t
        for e in questions
        for qa in e.qa
        for t in [qa.meta["title"], *qa.meta["options"].values()]
    }
    assert set(recording.calls[0]) == fixed
    assert not fixed & set(recording.calls[1])  # no text twice
    # batching changes nothing: each question's features as one encode of its own texts gives
    alone = build_embedder(HASHING)
    for episode, p in zip(questions, preds, strict=True):
        qa = episode.qa[0]
        v = alone.encode(
            [
                qa.meta["title"],
                qa.meta["options"]["[1]"],
                qa.meta["options"]["[2]"],
                *p.meta["texts"][3:],
            ]
        )
        assert p.meta["features"] == pytest.approx(features(v[0], v[1], v[2], v[3:]), abs=1e-5)
        assert p.meta["n_recalled"] == len(p.meta["texts"]) - 3 > 0


def test_each_questions_latency_is_its_recall_plus_an_equal_share_of_the_encode(questions):
    llm = build_llm({"backend": "extractive"}, cache_path=None)
    embedder = build_embedder(HASHING)
    protocol = LaMP1Protocol(embedder=embedder)
    preds = _replay(protocol, lambda: FullHistory(llm, embedder), questions[:10], llm)
    shares = {round(p.meta["latency_s"] - p.meta["recall_s"], 6) for p in preds}
    assert len(shares) <= 2 and min(shares) >= 0  # one share (rounding may split it by 1e-6)
    assert max(shares) - min(shares) <= 2e-6
    # a prediction read back with its features (a resumed run's) is kept, not re-timed
    again = protocol.finish(preds)
    assert [p.meta for p in again] == [p.meta for p in preds]
    # score completes predictions that never went through finish (a caller without the runner)
    bare = [
        p.__class__(
            **{
                **p.__dict__,
                "meta": {k: v for k, v in p.meta.items() if k not in ("features", "latency_s")},
            }
        )
        for p in preds
    ]
    _, summary = protocol.score(bare, ["accuracy", "latency_ms"])
    assert summary["metrics"]["accuracy"]["n"] == 10
    assert summary["metrics"]["latency_ms"]["value"] > 0


def test_fixed_queries_are_the_queries_the_replay_recalls(questions):
    llm = build_llm({"backend": "extractive"}, cache_path=None)
    embedder = build_embedder(HASHING)
    protocol = LaMP1Protocol(embedder=embedder)
    _Recorder.asked = []
    _replay(protocol, lambda: _Recorder(llm, embedder), questions[:5], llm)
    assert _Recorder.asked == [q for e in questions[:5] for q in protocol.fixed_queries(e)]
