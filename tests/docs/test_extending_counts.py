"""docs/extending.md's counts hold: each unit is added to a copy of ``conf/`` with exactly the
files the page counts, and runs through the entry points a user's command goes through.

- a memory method: its module and its config (2), and ``recallbench memory=<stem>`` runs;
- a dataset: its loader, its config and its fixture (3), and a run's dataset node loads it;
- a protocol: its module and its config (2), and ``recallbench protocol=<name>`` runs;
- a paper table: one experiment file and one reference entry; its make target, its steps and
  its paper values follow with no other edit (no Makefile rule, no list elsewhere).

The modules are the page's examples (``docs/examples/``) under the names the page gives them,
on ``sys.path`` instead of inside ``src/recallbench`` (the tests must not write into the package).
"""

from __future__ import annotations

import importlib
import json
import re
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from recallbench import CONF_DIR

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "extending.md").read_text(encoding="utf-8")
EXAMPLES = ROOT / "docs" / "examples"
FIXTURES = ROOT / "data" / "fixtures"
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4}
BASE = ["embedder=hashing", "generator=extractive", "progress=false", "wandb.mode=disabled"]


def count(unit: str) -> int:
    """The number of files the page says adding ``unit`` takes ("So a dataset is three files")."""
    match = re.search(rf"So a {unit} is (\w+) files", " ".join(DOC.split()))
    assert match, f"docs/extending.md states no count for a {unit}"
    return WORDS[match[1]]


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A copy of conf/ and a folder of modules on sys.path; returns (conf, modules, added)."""
    conf, modules = tmp_path / "conf", tmp_path / "modules"
    shutil.copytree(CONF_DIR, conf)
    modules.mkdir()
    monkeypatch.syspath_prepend(str(modules))
    added: list[Path] = []
    yield conf, modules, added
    for name in ("last_turns", "toy_jsonl", "next_reply"):
        sys.modules.pop(name, None)


def _add(added: list[Path], path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    assert not path.exists(), f"{path} exists: adding it would be an edit, not a new file"
    path.write_text(text, encoding="utf-8")
    added.append(path)


def _run(conf: Path, tmp: Path, overrides: list[str], choices: dict[str, str]) -> Path:
    from hydra import compose, initialize_config_dir

    from recallbench.cli import run

    overrides = [*BASE, f"paths.results_dir={tmp / 'results'}", *overrides]
    with initialize_config_dir(str(conf), version_base="1.3"):
        cfg = compose("config", overrides=overrides)
    folder = run(cfg, "job", choices, overrides)
    assert folder is not None
    return folder


def test_a_memory_method_is_its_module_and_its_config(project, tmp_path):
    conf, modules, added = project
    _add(added, modules / "last_turns.py", (EXAMPLES / "memory_method.py").read_text())
    _add(added, conf / "memory" / "last_turns.yaml", "_target_: last_turns.LastTurns\nn: 2\n")
    assert len(added) == count("memory method")
    msc = [f"dataset.data_dir={FIXTURES}", "episodes=1", "metrics.names=[rouge_l]"]
    folder = _run(conf, tmp_path, ["memory=last_turns", *msc], {"memory": "last_turns"})
    summary = json.loads((folder / "summary.json").read_text())
    assert "rouge_l" in json.dumps(summary)
    memory = next((folder / "memory").glob("*.jsonl")).read_text()
    assert '"kind": "turn"' in memory  # the example method's store: whole turns


def test_a_dataset_is_its_loader_its_config_and_its_fixture(project, tmp_path):
    from hydra import compose, initialize_config_dir

    from recallbench.cli.build import build_dataset

    conf, modules, added = project
    data = tmp_path / "data"
    _add(added, modules / "toy_jsonl.py", (EXAMPLES / "dataset_loader.py").read_text())
    node = {"_target_": "toy_jsonl.load", "name": "toy_jsonl", "data_dir": "${paths.data_dir}"}
    _add(added, conf / "dataset" / "toy_jsonl.yaml", yaml.safe_dump({**node, "options": {}}))
    episode = {"id": "e1", "sessions": [[["A", "I adopted a puppy."], ["B", "Lovely!"]]]}
    _add(added, data / "toy_jsonl" / "toy.jsonl", json.dumps(episode) + "\n")
    assert len(added) == count("dataset")
    with initialize_config_dir(str(conf), version_base="1.3"):
        cfg = compose("config", overrides=["dataset=toy_jsonl", f"paths.data_dir={data}"])
    (loaded,) = build_dataset(cfg.dataset)
    assert loaded.episode_id == "e1" and loaded.sessions[0].turns[1].text == "Lovely!"


def test_a_protocol_is_its_module_and_its_config(project, tmp_path):
    conf, modules, added = project
    _add(added, modules / "next_reply.py", (EXAMPLES / "protocol.py").read_text())
    config = (
        "_target_: next_reply.NextReply\nname: next_reply\nmax_tokens: 64\nmetrics: [rouge_l]\n"
    )
    _add(added, conf / "protocol" / "next_reply.yaml", config)
    assert len(added) == count("protocol")
    args = ["protocol=next_reply", "memory=full_history", f"dataset.data_dir={FIXTURES}"]
    folder = _run(conf, tmp_path, [*args, "episodes=1"], {"protocol": "next_reply"})
    predictions = (folder / "predictions.jsonl").read_text().splitlines()
    (pred,) = [json.loads(line) for line in predictions]  # one episode, its last session's reply
    assert pred["pred_id"] == "test_1/next" and pred["reference"] and pred["recalled"]


def test_a_paper_table_is_one_experiment_file_and_one_reference_entry(
    project, tmp_path, monkeypatch
):
    from recallbench.cli.reproduce import steps, targets
    from recallbench.tables import load_spec
    from recallbench.tables.engine import reference_values

    render = importlib.import_module("recallbench.tables.render")  # the module, not the function

    conf, _, added = project
    match = re.search(
        r"So a paper table is one experiment file and one reference entry", " ".join(DOC.split())
    )
    assert match, "docs/extending.md: the paper table's count"
    papers = tmp_path / "papers"  # a copy of the package's papers/, where reference entries live
    shutil.copytree(render.PAPERS_DIR, papers)
    monkeypatch.setattr(render, "PAPERS_DIR", papers)
    experiment = (EXAMPLES / "table.yaml").read_text().replace("id: table2\n", "id: table20\n")
    _add(added, conf / "experiment" / "theanine_table20.yaml", experiment)  # 1: the experiment
    reference = papers / "theanine" / "reference.yaml"
    entry = {
        "table20": {"source": "a test's entry", "values": {"THEANINE": {"MSC": {"bleu4": 1.5}}}}
    }
    with reference.open("a", encoding="utf-8") as fh:  # 2: one entry in an existing file
        fh.write("\n" + yaml.safe_dump(entry))
    assert len(added) == 1
    known = targets(conf)
    assert known["reproduce-table-theanine-20"].experiment == "theanine_table20"
    first, *_, last = steps(
        "reproduce-table-theanine-20",
        results=tmp_path,
        gen_args=[],
        args=[],
        judge="lexical",
        make=["make"],
        conf_dir=conf,
    )
    assert first.argv == ["make", "reproduce-table-theanine-2"]  # its runs, when missing
    assert last.argv[-2:] == ["table", "theanine_table20"]
    spec = load_spec("theanine_table20", conf_dir=conf)
    assert reference_values(spec) == {"THEANINE": {"MSC": {"bleu4": 1.5}}}
