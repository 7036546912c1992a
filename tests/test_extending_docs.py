"""docs/extending.md's worked examples run: each ```python / ```yaml block marked
``<!-- example: docs/examples/<file> -->`` is that file verbatim, and the files work."""

from __future__ import annotations

import importlib
import re
import shutil
import sys
from pathlib import Path

import pytest

from recallbench import CONF_DIR
from recallbench.cli.build import build_dataset, build_memory_factory, build_protocol
from recallbench.embed import HashingEmbedder
from recallbench.errors import ConfigError, DatasetFormatError
from recallbench.llm import build_llm
from recallbench.metrics import METRICS
from recallbench.metrics.scoring import score_predictions
from recallbench.protocols.response import ResponseProtocol
from recallbench.records import Episode, Session, Turn
from recallbench.tables import load_spec

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "extending.md"
EXAMPLES = ROOT / "docs" / "examples"


@pytest.fixture(scope="module", autouse=True)
def _examples_importable():
    sys.path.insert(0, str(EXAMPLES))
    yield
    sys.path.remove(str(EXAMPLES))


def _blocks() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    found = re.findall(r"<!-- example: docs/examples/(\S+) -->\n```\w+\n(.*?)```", text, re.S)
    return dict(found)


def test_every_example_is_shown_verbatim_in_the_doc():
    blocks = _blocks()
    files = sorted(p.name for p in EXAMPLES.iterdir() if p.suffix in {".py", ".yaml"})
    assert sorted(blocks) == files
    for name, code in blocks.items():
        assert code == (EXAMPLES / name).read_text(encoding="utf-8"), f"{name} differs from the doc"


def _episode(eid: str = "ep1") -> Episode:
    def session(i: int, lines: list[tuple[str, str]]) -> Session:
        turns = tuple(Turn(f"{eid}/s{i}/t{j}", s, t) for j, (s, t) in enumerate(lines))
        return Session(f"{eid}/s{i}", i, None, turns)

    return Episode(
        eid,
        "toy",
        ("A", "B"),
        (
            session(1, [("A", "I adopted a puppy named Biscuit."), ("B", "What breed is he?")]),
            session(2, [("A", "Biscuit chewed my shoes."), ("B", "Puppies chew everything.")]),
            session(3, [("A", "Guess who ate my homework?"), ("B", "Was it Biscuit the puppy?")]),
        ),
    )


def test_memory_method_example_runs_through_a_protocol():
    llm = build_llm({"backend": "extractive"}, cache_path=None)
    cfg = {"_target_": "memory_method.LastTurns", "n": 1}  # as conf/memory/last_turns.yaml
    method = build_memory_factory(cfg, llm, HashingEmbedder(dim=16))()  # as a run builds it
    result = ResponseProtocol(target_sessions=[3]).run_episode(_episode(), method, llm)
    (pred,) = [p for p in result.predictions if p.reference is not None]  # not the timings
    assert pred.reference == "Was it Biscuit the puppy?"
    # session 1-2's last turns (n=1) are what it remembers, and nothing of session 3
    assert pred.recalled == ("ep1/s1/t1", "ep1/s2/t1")
    assert [i for i, _ in result.snapshots] == [1, 2, 3]
    with pytest.raises(ConfigError, match="memory memory_method.LastTurns: .*n must be >= 1"):
        build_memory_factory({**cfg, "n": 0}, llm, None)()


def test_dataset_loader_example_reads_and_locates_errors(tmp_path):
    loader = importlib.import_module("dataset_loader")
    folder = tmp_path / "toy_jsonl"
    folder.mkdir()
    (folder / "toy.jsonl").write_text(
        '{"id": "e1", "sessions": [[["A", "hi"], ["B", "hello"]], [["A", "again"]]]}\n'
        "\n"
        '{"id": "e2", "sessions": [[["B", "yo"]]]}\n'
    )
    eps = loader.load(tmp_path)
    assert [e.episode_id for e in eps] == ["e1", "e2"]
    # as a run builds it from conf/dataset/toy_jsonl.yaml (_target_ + data_dir + options)
    node = {"_target_": "dataset_loader.load", "name": "toy_jsonl", "data_dir": str(tmp_path)}
    assert build_dataset({**node, "options": {"limit": 1}}) == eps[:1]
    assert eps[0].speakers == ("A", "B") and len(eps[0].sessions) == 2
    assert eps[0].sessions[1].turns[0].turn_id == "e1/s2/t0"
    assert len(loader.load(tmp_path, limit=1)) == 1
    (folder / "bad.jsonl").write_text('{"id": "e1", "sessions": [[["A"]]]}\n')
    with pytest.raises(DatasetFormatError, match=r"bad.jsonl:1: expected"):
        loader.load(tmp_path, file="bad.jsonl")


def test_metric_example_scores_by_hand_checked_values():
    metric = importlib.import_module("metric").ExactMatch()
    res = metric.compute(["Hello  World", "no", "b"], ["hello world", ["x", "NO"], "a"])
    assert res.items == [1.0, 1.0, 0.0]
    assert res.value == pytest.approx(2 / 3)
    assert metric.compute([], []).value == 0.0
    METRICS["exact_match"] = metric  # registered, the runner scores with it by name
    try:
        from recallbench.records import Prediction

        preds = [Prediction("p1", "ep1", 3, "response", "h", "Yes", reference="yes")]
        _, summary = score_predictions(preds, ["exact_match"])
        assert summary["metrics"]["exact_match"]["value"] == 1.0
    finally:
        del METRICS["exact_match"]


def test_protocol_example_predicts_the_last_sessions_reply():
    from memory_method import LastTurns
    from protocol import NextReply

    llm = build_llm({"backend": "extractive"}, cache_path=None)
    node = {"_target_": "protocol.NextReply", "name": "next_reply", "max_tokens": 32}
    protocol = build_protocol(node, 0, llm, None)  # as conf/protocol/next_reply.yaml builds it
    assert isinstance(protocol, NextReply) and protocol.max_tokens == 32
    result = NextReply().run_episode(_episode(), LastTurns(llm, None, n=2), llm)
    (pred,) = result.predictions
    assert (pred.session_index, pred.reference) == (3, "Was it Biscuit the puppy?")
    assert pred.output  # the extractive backend's offline reply
    assert len(pred.recalled) == 4 and [i for i, _ in result.snapshots] == [1, 2]


def test_table_example_is_a_valid_spec(tmp_path):
    conf = tmp_path / "conf"
    shutil.copytree(CONF_DIR, conf)
    shutil.copy(EXAMPLES / "table.yaml", conf / "experiment" / "theanine_table2_msc.yaml")
    spec = load_spec("theanine_table2_msc", conf_dir=conf)
    assert spec.runs == "theanine_table2"
    assert [r["label"] for r in spec.rows] == ["THEANINE", "w/o Relation-aware Linking"]
