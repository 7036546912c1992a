"""docs/extending.md's counts hold: each unit is added to a copy of ``conf/`` with exactly the
files the page counts, and runs through the entry points a user's command goes through.

- a memory method: its package's two files and its config (3), and ``recallbench memory=<stem>``
  runs; every method under src/recallbench/memory/ has that layout (the tree holds the count);
- a dataset: its loader, its config and its fixture (3), and a run's dataset node loads it;
- a protocol: its package's two files and its config (3), and ``recallbench protocol=<name>``
  runs; every protocol package has that layout;
- a paper table: one experiment file and one reference entry; its make target, its steps and
  its paper values follow with no other edit (no Makefile rule, no list elsewhere).

A protocol's own measure is where the page says: its name in the protocol's tuple and config, its
summary entry from the protocol's scoring, its column by name in a table.

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
    for name in list(sys.modules):
        if name.split(".")[0] in ("last_turns", "toy_jsonl", "next_reply"):
            sys.modules.pop(name)


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


def _package(added: list[Path], folder: Path, example: str, name: str) -> None:
    """A method's or protocol's two Python files: ``_<stem>.py`` and the re-exporting init."""
    _add(added, folder / f"_{folder.name}.py", (EXAMPLES / example).read_text())
    _add(added, folder / "__init__.py", f"from {folder.name}._{folder.name} import {name}\n")


def test_a_memory_method_is_its_package_and_its_config(project, tmp_path):
    conf, modules, added = project
    _package(added, modules / "last_turns", "memory_method.py", "LastTurns")
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


def test_a_protocol_is_its_package_and_its_config(project, tmp_path):
    conf, modules, added = project
    _package(added, modules / "next_reply", "protocol.py", "NextReply")
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


PACKAGE = ROOT / "src" / "recallbench"


def _packages(layer: str) -> list[Path]:
    return sorted(p.parent for p in (PACKAGE / layer).glob("*/__init__.py"))


def test_every_memory_method_in_the_tree_is_the_files_the_page_counts():
    """Each method package: ``__init__.py`` re-exporting from ``_<stem>.py``, and its config;
    what the methods share is in ``memory/blocks/``, which is no method (it has no config)."""
    methods = [p for p in _packages("memory") if p.name != "blocks"]
    assert len(methods) > 15 and "memory/blocks/" in " ".join(DOC.split())
    assert not (CONF_DIR / "memory" / "blocks.yaml").exists()
    for folder in methods:
        stem = folder.name
        minimal = [
            folder / "__init__.py",
            folder / f"_{stem}.py",
            CONF_DIR / "memory" / f"{stem}.yaml",
        ]
        assert all(f.is_file() for f in minimal), f"memory/{stem}: expected {minimal}"
        init = (folder / "__init__.py").read_text(encoding="utf-8")
        assert f"from recallbench.memory.{stem}._{stem} import" in init, f"memory/{stem}/__init__"
    assert len(minimal) == count("memory method")


def test_every_protocol_in_the_tree_is_the_files_the_page_counts():
    """Each protocol package: ``__init__.py`` and a private module with the class, and a config
    under conf/protocol whose ``_target_`` is in the package."""
    targets = [
        str(yaml.safe_load(p.read_text(encoding="utf-8"))["_target_"])
        for p in sorted((CONF_DIR / "protocol").glob("*.yaml"))
    ]
    protocols = _packages("protocols")
    assert len(protocols) > 5
    for folder in protocols:
        private = sorted(folder.glob("_[!_]*.py"))
        assert private, f"protocols/{folder.name}: no private module holds the class"
        configs = [t for t in targets if t.startswith(f"recallbench.protocols.{folder.name}.")]
        assert configs, f"protocols/{folder.name}: no conf/protocol config targets it"
    assert 1 + 1 + 1 == count("protocol")  # __init__.py, the private module, the config


def test_a_protocol_measure_is_where_the_page_says():
    """recall_at_5, the page's example: in locomo_qa's tuple and config, scored into its summary
    entry, and read by name by the table that shows it."""
    from recallbench.metrics.bootstrap import clustered_entry
    from recallbench.protocols.locomo._score import METRICS, RECALL_K
    from recallbench.tables import load_spec
    from recallbench.tables.cells import entry_number
    from recallbench.tables.entry import Entry

    text = " ".join(DOC.split())
    for place in ("protocols/locomo/_score.py", "conf/protocol/locomo_qa.yaml", "tables/cells.py"):
        assert place in text, f"docs/extending.md: the measure section names {place}"
    assert "recall_at_5" in METRICS and RECALL_K["recall_at_5"] == 5
    config = yaml.safe_load((CONF_DIR / "protocol" / "locomo_qa.yaml").read_text())
    assert "recall_at_5" in config["metrics"]
    assert "recall_at_5" in load_spec("locomo_table1").metrics
    # The summary entry the page describes, and the number a table's cell reads from it.
    rows = [("conv-1", 1, [1.0, 1.0]), ("conv-1", 1, [0.0, 1.0]), ("conv-2", 1, [0.5, 1.0])]
    entry = clustered_entry(rows, per_session=False)
    assert entry["value"] == pytest.approx(0.5) and entry["n"] == 3 and "ci95" in entry
    assert entry_number(entry, Entry("All"), "value") == (pytest.approx(0.5), 3)
