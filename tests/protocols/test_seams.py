"""The typed seams: every configured protocol is an ``EvalProtocol``; the real LLM client and
every embedder satisfy the ``LLMClient`` / ``TextEmbedder`` protocols the signatures name."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from recallbench import CONF_DIR
from recallbench.cli import compose_job
from recallbench.cli.build import build_protocol
from recallbench.embed import HashingEmbedder, TextEmbedder
from recallbench.llm import LLMClient, build_llm
from recallbench.memory import MemoryMethod
from recallbench.protocols.base import EvalProtocol
from recallbench.records import Episode


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
