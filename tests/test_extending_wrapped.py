"""docs/examples/wrapped_system.py (docs/extending.md): a wrapped service run through LoCoMo QA."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

from recallbench.cli.build import build_memory_factory
from recallbench.datasets.locomo import load
from recallbench.embed import HashingEmbedder
from recallbench.judges.lexical import LexicalJudge
from recallbench.llm import build_llm
from recallbench.protocols.locomo import LocomoQAProtocol

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"


@pytest.fixture(autouse=True)
def _examples_importable():
    sys.path.insert(0, str(EXAMPLES))
    yield
    sys.path.remove(str(EXAMPLES))


def test_wrapped_service_answers_locomo_with_sources(fixtures_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (episode,) = load(fixtures_dir, conversations="conv-2")
    llm = build_llm({"backend": "extractive"}, cache_path=None)
    node = {"_target_": "wrapped_system.ServiceMemory", "top_k": 1}  # as conf/memory/<name>.yaml
    method = build_memory_factory(node, llm, HashingEmbedder(dim=16))()
    result = LocomoQAProtocol(judge=LexicalJudge()).run_episode(episode, method, llm)
    answers = {
        p.meta["qa_id"].rsplit("/", 1)[1]: p for p in result.predictions if p.kind == "answer"
    }
    # "Where did Dev move?" finds Dev's turn D1:2 (the service's top hit, with its source turn)
    assert answers["q0"].recalled == ("locomo/conv-2/D1:2",)
    assert "Oslo" in answers["q0"].output
    assert [len(items) for _, items in result.snapshots] == [2, 4]  # one memory per turn
    other = build_memory_factory(node, llm, HashingEmbedder(dim=16))()
    other.reset(episode)
    assert other.snapshot() == []  # a fresh scope per method and episode
