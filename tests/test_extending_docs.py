"""docs/extending.md's worked examples run: each ```python / ```yaml block marked
``<!-- example: docs/examples/<file> -->`` is that file verbatim, and the files work."""

from __future__ import annotations

import importlib
import json
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
from recallbench.tables.engine import table_runs
from recallbench.tables.spec import parse_spec

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
    assert [r.label for r in spec.rows] == ["THEANINE", "w/o Relation-aware Linking"]


def _own_runs(tmp_path: Path) -> tuple[Path, Path]:
    """Real runs of the own-table example's rows, made as the example's header says: the docs'
    memory method (conf/memory/last_turns.yaml) swept over n, and two baselines, one tag."""
    from hydra import compose, initialize_config_dir

    from recallbench.cli import run

    conf, results = tmp_path / "conf", tmp_path / "results"
    shutil.copytree(CONF_DIR, conf)
    (conf / "memory" / "last_turns.yaml").write_text("_target_: memory_method.LastTurns\nn: 2\n")
    shutil.copy(EXAMPLES / "own_table.yaml", conf / "experiment" / "my_comparison.yaml")
    base = [
        f"paths.results_dir={results}",
        f"dataset.data_dir={ROOT / 'data' / 'fixtures'}",
        "embedder=hashing",
        "generator=extractive",
        "metrics.names=[rouge_l,bleu4]",
        "progress=false",
        "wandb.mode=disabled",
        "tag=mysweep",
    ]
    jobs = [("last_turns", ["memory.n=1"]), ("last_turns", ["memory.n=2"])]
    jobs += [("memory_retrieval", []), ("full_history", [])]
    for memory, extra in jobs:
        overrides = [*base, f"memory={memory}", *extra]
        with initialize_config_dir(str(conf), version_base="1.3"):
            cfg = compose("config", overrides=overrides)
        job = "-".join(["msc", memory, *extra])
        run(cfg, job, {"memory": memory, "dataset": "msc"}, overrides)
    return conf, results


def test_own_table_example_renders_the_users_runs(tmp_path):
    import csv

    from recallbench.tables import TableContext, reproduce, table_only

    conf, results = _own_runs(tmp_path)
    spec = load_spec("my_comparison", conf_dir=conf)
    assert (spec.paper, spec.id, spec.tags, spec.folders) == (
        None,
        "my_comparison",
        ("mysweep",),
        (),
    )
    assert "table of existing runs (tag mysweep)" in table_only(
        "my_comparison", {"runs": {"tag": "mysweep"}}
    )
    files = reproduce(spec, TableContext(results_dir=results))
    assert files["md"] == results / "tables" / "my_comparison.md"
    with files["csv"].open(encoding="utf-8") as fh:
        cells = {(r["row"], r["metric"]): r for r in csv.DictReader(fh)}
    runs = {p.name: p for p in (results / "runs" / "mysweep").glob("*/*")}
    for row, job in [
        ("Last turns (n=1)", "msc-last_turns-memory.n=1"),
        ("Last turns (n=2)", "msc-last_turns-memory.n=2"),
        ("Memory Retrieval", "msc-memory_retrieval"),
        ("Full history", "msc-full_history"),
    ]:
        summary = json.loads((runs[job] / "summary.json").read_text())["metrics"]
        cell = cells[row, "R-L"]
        assert float(cell["ours"]) == pytest.approx(100 * summary["rouge_l"]["value"], abs=0.051)
        assert cell["paper"] in ("", "n/a") and cell["diff"] in ("", "n/a")
    # the runs read the project's fixtures: paired tests against the reference row do not run
    # (a fixture is a pipeline check, tables.family) and the notes say why; no comparability line
    assert cells["Full history", "R-L"]["coverage"] == "§"
    assert cells["Full history", "R-L"]["p_value"] == ""
    md = files["md"].read_text(encoding="utf-8")
    assert "fixture data" in md
    assert "(—)" not in md and "comparability" not in md and "Each cell: ours." in md
    # the same runs read by folder (a sweep folder of the tag)
    stamp = next(p for p in (results / "runs" / "mysweep").iterdir())
    block = {**_yaml_table(conf), "runs": {"folder": str(stamp)}}
    folder_spec = parse_spec("my_comparison", conf / "x.yaml", block, conf_dir=conf)
    assert {r.path.parent for r in table_runs(folder_spec, results)} == {stamp}


def _yaml_table(conf: Path) -> dict:
    import yaml

    return yaml.safe_load((conf / "experiment" / "my_comparison.yaml").read_text())["table"]
