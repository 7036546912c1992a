"""The typed seams: every configured protocol is an ``EvalProtocol``; the real LLM client and
every embedder satisfy the ``LLMClient`` / ``TextEmbedder`` protocols the signatures name."""

from __future__ import annotations

import inspect
from dataclasses import replace

import numpy as np
import pytest

from recallbench import CONF_DIR
from recallbench.cli import compose_job
from recallbench.cli.build import build_protocol
from recallbench.embed import HashingEmbedder, TextEmbedder
from recallbench.llm import LLMClient, build_llm
from recallbench.memory import MemoryMethod
from recallbench.protocols.base import EpisodeResult, EvalProtocol
from recallbench.records import Episode, Prediction


@pytest.mark.parametrize(
    "path", sorted((CONF_DIR / "protocol").glob("*.yaml")), ids=lambda p: p.stem
)
def test_every_protocol_config_builds_an_eval_protocol(path, tmp_path):
    """Composed as a run composes it: ``_target_`` names an ``EvalProtocol`` whose ``name`` is
    the config's ``name:``; its model slots arrive as objects."""
    cfg, _ = compose_job(
        [f"protocol={path.stem}", "+judge=lexical", "embedder=hashing"]
        + [f"paths.results_dir={tmp_path}", f"paths.cache_dir={tmp_path}"]
    )
    llm = build_llm({"backend": "extractive"}, cache_path=None)
    embedder = HashingEmbedder()
    proto = build_protocol(cfg.protocol, 0, llm, embedder, tmp_path)
    assert isinstance(proto, EvalProtocol)
    assert proto.name == cfg.protocol.name
    for arg, group in type(proto).MODELS.items():
        assert group in {"judge", "caim_judge", "generator", "embedder"}, (arg, group)
    if path.stem == "teafarm":  # null generator slots: the run's own LLM is injected
        assert proto.question_llm is llm and proto.judge_llm is llm
    if path.stem == "lamp1":  # ${embedder}: built from the run's embedder config
        assert proto.embedder.encode(["a b"]).shape == (1, 256)


def test_eval_protocol_requires_run_episode():
    class Incomplete(EvalProtocol):
        name = "incomplete"

    with pytest.raises(TypeError, match="run_episode"):
        Incomplete()

    class Minimal(EvalProtocol):
        name = "minimal"

        def run_episode(self, episode, method, llm):
            return episode.episode_id

    proto = Minimal()
    assert proto.prepare([]) is None  # the default hook does nothing
    assert proto.run_episode(Episode("e1", "toy", ("A", "B"), ()), None, None) == "e1"


def test_llm_client_and_embedders_satisfy_the_typed_seams():
    llm = build_llm({"backend": "extractive"}, cache_path=None)
    assert isinstance(llm, LLMClient)
    emb = HashingEmbedder(dim=16)
    assert isinstance(emb, TextEmbedder)
    assert emb.encode(["a b"]).shape == (1, 16)
    assert not isinstance(object(), LLMClient)

    class Fixed:  # a test double needs only what the protocol names, no base class
        name, dim = "fixed", 2

        def encode(self, texts):
            return np.ones((len(texts), 2), dtype=np.float32) / np.sqrt(2)

    assert isinstance(Fixed(), TextEmbedder)


def test_memory_methods_and_protocols_are_typed_against_the_seams():
    from recallbench.memory.naive_rag import NaiveRAG
    from recallbench.protocols.response import ResponseProtocol

    params = inspect.signature(NaiveRAG.__init__).parameters
    assert params["llm"].annotation == "LLMClient"
    assert params["embedder"].annotation == "TextEmbedder"
    run = inspect.signature(ResponseProtocol.run_episode).parameters
    assert run["llm"].annotation == "LLMClient"
    assert issubclass(NaiveRAG, MemoryMethod)


def test_optional_abilities_are_runtime_checkable_protocols():
    """``retention``, ``answer_prompt_fields`` and ``updater`` are declared abilities: the
    methods that offer them satisfy the Protocol, the others do not, and a double qualifies by
    defining the method alone."""
    from recallbench.memory import HasAnswerPromptFields, HasRetention, HasUpdater
    from recallbench.memory.naive_rag import NaiveRAG
    from recallbench.memory.no_memory import NoMemory
    from recallbench.memory.session_summaries import SessionSummaries

    llm = build_llm({"backend": "extractive"}, cache_path=None)
    emb = HashingEmbedder(dim=16)
    lufy_family = NaiveRAG(llm, emb)
    assert isinstance(lufy_family, HasRetention)
    assert isinstance(lufy_family, HasAnswerPromptFields)
    assert not isinstance(lufy_family, HasUpdater)
    summaries = SessionSummaries(llm, emb)
    assert isinstance(summaries, HasUpdater) and summaries.updater is None  # accumulates only
    assert not isinstance(summaries, HasRetention)
    plain = NoMemory(llm, emb)
    assert not any(isinstance(plain, p) for p in (HasRetention, HasAnswerPromptFields, HasUpdater))

    class Counting:
        def retention(self) -> dict[str, int]:
            return {"created": 2, "retained": 1}

    assert isinstance(Counting(), HasRetention)


class _Echo(EvalProtocol):
    """One prediction per episode whose output is its reference (token F1 = 1)."""

    name = "echo"

    def run_episode(self, episode, method, llm):
        method.reset(episode)
        pred = Prediction(f"{episode.episode_id}/p", episode.episode_id, 1, "response", "", "a b")
        return EpisodeResult([replace(pred, reference="a b")])


class _EchoWithExtra(_Echo):
    """Also one item outside any episode, whose output shares nothing with its reference."""

    def run_extra(self, make_method, llm):
        make_method()
        return [Prediction("extra/p", "pairs", 0, "response", "", "x y", reference="a b")]


def test_default_hooks_score_by_reference_and_have_no_extra_items():
    proto = _Echo()

    def no_method():
        raise AssertionError("the default run_extra must not build a method")

    llm = build_llm({"backend": "extractive"}, cache_path=None)
    assert proto.run_extra(no_method, llm) == []
    preds = [
        Prediction("e/1", "e", 1, "response", "", "the cat sat", reference="the cat sat"),
        Prediction("e/2", "e", 1, "response", "", "dogs run", reference="the cat sat"),
    ]
    scores, summary = proto.score(preds, ["token_f1"])
    assert [s.value for s in scores] == [1.0, 0.0]  # exact match, no shared token
    assert summary["metrics"]["token_f1"]["value"] == pytest.approx(0.5)


@pytest.mark.parametrize("protocol", [_Echo(), _EchoWithExtra()], ids=["default", "extra"])
def test_runner_calls_the_hooks_declared_on_eval_protocol(protocol, tmp_path):
    """The runner calls ``prepare``, ``run_extra`` and ``score`` directly: the defaults give no
    extra file and no extra method; an override's items are scored with the episode's."""
    from recallbench.memory.no_memory import NoMemory
    from recallbench.run.runner import Runner

    llm = build_llm({"backend": "extractive"}, cache_path=None)
    built: list[MemoryMethod] = []

    def make_method() -> MemoryMethod:
        built.append(NoMemory(llm, HashingEmbedder(dim=16)))
        return built[-1]

    episode = Episode("e1", "toy", ("A", "B"), ())
    runner = Runner(
        tmp_path / "run",
        protocol=protocol,
        make_method=make_method,
        llm=llm,
        metrics=["token_f1"],
        progress=False,
    )
    entry = runner.run([episode])["metrics"]["token_f1"]
    extra = isinstance(protocol, _EchoWithExtra)
    assert len(built) == (2 if extra else 1)
    assert (tmp_path / "run" / "items" / "_extra.jsonl").exists() == extra
    assert entry["n"] == (2 if extra else 1)
    assert entry["value"] == pytest.approx(0.5 if extra else 1.0)
