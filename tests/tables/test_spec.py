"""The one ``table:`` schema: every experiment validates; bad blocks fail naming file and key;
``runs:`` points a table-only experiment at another experiment's run folders."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from recallbench import CONF_DIR
from recallbench.tables import TableSpecError, load_spec, table_only
from recallbench.tables.engine import resolve_builder
from recallbench.tables.entry import Entry, MetricSpec
from recallbench.tables.spec import SUMMARY_BUILDER, parse_spec


def _block(e: str) -> dict:
    return yaml.safe_load((CONF_DIR / "experiment" / f"{e}.yaml").read_text()) or {}


# every experiment but the matrix (a matrix: block instead of a table, tables/matrix.py)
EXPERIMENTS = sorted(
    p.stem for p in (CONF_DIR / "experiment").glob("*.yaml") if "matrix" not in _block(p.stem)
)
SWEEP_ONLY = [e for e in EXPERIMENTS if "table" not in _block(e)]
TABLES = [e for e in EXPERIMENTS if e not in SWEEP_ONLY]
WHERE = Path("conf/experiment/x.yaml")
GOOD = {
    "paper": "lufy",
    "id": "table3",
    "title": "t",
    "rows": [{"label": "LUFY", "memory": "lufy", "logs": "LUFY"}],
    "columns": [{"label": "S1", "session": 1}],
    "metrics": {"retained": {"label": "Retained", "scale": 1, "digits": 1}},
}


def parse(**changes):
    block = {k: v for k, v in {**GOOD, **changes}.items() if v is not ...}
    return parse_spec("x", WHERE, block, own_tag="x")


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_every_experiment_table_validates_and_its_builder_resolves(experiment):
    if experiment in SWEEP_ONLY:  # a sweep without a table: another experiment's table reads it
        assert any(experiment in spec.tags for spec in map(load_spec, TABLES)), experiment
        return
    spec = load_spec(experiment)
    own = spec.paper is None  # a table of our own (the cross-paper matrix): any file name
    assert (own or spec.id.startswith(("table", "figure"))) and spec.title
    assert callable(resolve_builder(spec))
    assert (spec.runs is None) == (spec.tag is None)


def test_defaults_of_a_sweep_experiment():
    spec = load_spec("theanine_table1")
    assert (spec.runs, spec.tag, spec.builder) == (
        "theanine_table1",
        "theanine_table1",
        SUMMARY_BUILDER,
    )
    assert spec.options == {"value": "session_mean", "reference_row": "THEANINE"}
    assert spec.metrics["bleu4"] == MetricSpec(label="Bleu-4", scale=100, digits=None)


@pytest.mark.parametrize(
    ("experiment", "runs"),
    [
        ("lufy_table3", "lufy_table11"),
        ("lufy_table16", "lufy_table11"),
        ("lufy_table12", "lufy_table11"),
        ("lufy_table15", "lufy_table11"),
        ("lufy_table14", "lufy_table13"),
        ("theanine_table9", "theanine_table1"),
        ("theanine_figure5", "theanine_table1"),
        ("caim_table2", "caim_table3"),
        ("caim_table4", "caim_table3"),
    ],
)
def test_table_only_experiments_read_the_runs_of_another(experiment, runs):
    spec = load_spec(experiment)
    assert (spec.runs, spec.tag) == (runs, runs)
    message = table_only(experiment, {"runs": runs})
    assert f"reads the runs of experiment {runs}" in message
    assert f"recallbench -m experiment={runs}" in message
    assert f"recallbench-table {experiment}" in message


@pytest.mark.parametrize(
    "experiment", ["lufy_table1", "carecall_table1", "lufy_table10", "lufy_table2"]
)
def test_data_tables_read_no_runs(experiment):
    assert load_spec(experiment).runs is None
    assert "reads the data under paths.data_dir" in table_only(experiment, {"runs": None})


def test_experiments_with_a_sweep_are_not_table_only():
    assert table_only("lufy_table11", {"paper": "lufy"}) is None
    assert table_only("lufy_table11", {"runs": "lufy_table11"}) is None
    assert table_only("adhoc", None) is None


@pytest.mark.parametrize(
    ("changes", "key", "expected"),
    [
        ({"kind": "summary"}, "table.kind", "removed; name the cell builder with table.builder"),
        ({"id": 3}, "table.id", "expected table<n> or figure<n>"),
        ({"id": "Fig5"}, "table.id", "expected table<n> or figure<n>"),
        ({"title": ...}, "table.title", "expected a non-empty string, got None"),
        ({"paper": "lufi"}, "table.paper", "Did you mean 'lufy'"),
        ({"builder": "summary"}, "table.builder", "expected a dotted path"),
        ({"runs": "lufy_tabel11"}, "table.runs", "Did you mean 'lufy_table11'"),
        (
            {"runs": "lufy_table3"},
            "table.runs",
            "lufy_table3 is itself table-only (it reads lufy_table11)",
        ),
        ({"runs": 11}, "table.runs", "expected an experiment name or null"),
        ({"rows": {"label": "x"}}, "table.rows", "expected a list of mappings"),
        ({"rows": [{"memory": "lufy"}]}, "table.rows[0]", "expected a mapping with a 'label'"),
        ({"columns": [{"label": "S1"}, {"label": "S1"}]}, "table.columns[1]", "'S1' appears twice"),
        (
            {"rows": [{"label": "L", "memroy": "lufy"}]},
            "table.rows[0].memroy",
            "Did you mean 'memory'",
        ),
        ({"metrics": {"f1": {"labl": "F1"}}}, "table.metrics.f1", "expected keys among"),
        ({"metrics": {"f1": {"scale": "x"}}}, "table.metrics.f1.scale", "expected a number"),
        (
            {"metrics": {"f1": {"digits": -1}}},
            "table.metrics.f1.digits",
            "expected an integer >= 0",
        ),
        ({"notes": ["a"]}, "table.notes", "expected a mapping name -> text"),
        ({"columns": [{"label": "S1", "session": "1"}]}, "table.columns[0].session", "a session"),
        ({"columns": [{"label": "S", "session": True}]}, "table.columns[0].session", "a session"),
        ({"columns": [{"label": "Q", "qsession": 4}]}, "table.columns[0].qsession", "a string"),
        ({"rows": [{"label": "R", "random": "yes"}]}, "table.rows[0].random", "true or false"),
        ({"rows": [{"label": "Z", "read": {"f1": 1}}]}, "table.rows[0].read", "metric -> summary"),
        ({"metrics": {"f1": {"label": 1}}}, "table.metrics.f1.label", "expected a string"),
    ],
)
def test_bad_blocks_name_file_key_and_expectation(changes, key, expected):
    with pytest.raises(TableSpecError) as info:
        parse(**changes)
    message = str(info.value)
    assert message.startswith(f"{WHERE}: {key}: "), message
    assert expected in message


def test_selector_keys_may_be_dotted_paths_aliases_and_groups():
    spec = parse(
        rows=[{"label": "a", "memory.threshold": 0.8, "logs": "LUFY", "lufy_pair": "lufy"}],
        columns=[{"label": "Avg.", "value": "session_mean", "random": True}],
    )
    assert spec.rows[0].select == {"memory.threshold": 0.8, "logs": "LUFY", "lufy_pair": "lufy"}
    assert spec.rows[0].logs == "LUFY"  # the alias a LUFY builder also loads the logs by
    assert spec.columns[0].select == {} and spec.columns[0].random is True


ENTRY_YAML = """
tag: x
table:
  paper: lufy
  id: table3
  title: t
  rows:
    - {label: Zep, job: zep, memory: [a, b], read: {j_audit: j_zep}, annotators: true}
    - {label: 2, memory.threshold: 0.8}
  columns:
    - {label: S1, session: 1, dataset: msc}
    - {label: S4 Q2, qsession: "4/2", subset: memory_turns, value: session_mean}
    - {label: p95, stage: total, quantile: p95, metric: f1}
  metrics:
    f1: {label: F1, scale: 100}
    n: {digits: 0}
"""


def test_a_yaml_block_gives_typed_rows_columns_and_metrics(tmp_path):
    (tmp_path / "experiment").mkdir()
    for group in ("memory", "dataset"):  # config groups: selecting keys
        (tmp_path / group).mkdir()
    (tmp_path / "experiment" / "x.yaml").write_text(ENTRY_YAML)
    spec = load_spec("x", conf_dir=tmp_path)
    zep, two = spec.rows
    assert zep == Entry(
        "Zep", {"job": "zep", "memory": ["a", "b"]}, read={"j_audit": "j_zep"}, annotators=True
    )
    assert two == Entry("2", {"memory.threshold": 0.8})  # a label is text; defaults elsewhere
    assert (two.session, two.value, two.read, two.random, two.metric, two.logs) == (
        None,
        None,
        {},
        False,
        None,
        None,
    )
    s1, q, p95 = spec.columns
    assert (s1.session, s1.select) == (1, {"dataset": "msc"}) and isinstance(s1.session, int)
    assert (q.qsession, q.subset, q.value, q.select) == ("4/2", "memory_turns", "session_mean", {})
    assert (p95.stage, p95.quantile, p95.metric, p95.select) == ("total", "p95", "f1", {})
    f1, n = spec.metrics["f1"], spec.metrics["n"]
    assert (f1.label_or("f1"), f1.scale_or(), f1.digits_or(2)) == ("F1", 100, 2)
    assert (n.label_or("n"), n.scale_or(7), n.digits_or(2)) == ("n", 7, 0)
    assert spec.need("rows") == (zep, two) and spec.need("metrics") == spec.metrics


def test_builder_options_and_their_errors():
    spec = parse(select={"memory": "naive_rag"})
    assert spec.option("select") == {"memory": "naive_rag"} and spec.option("x", 1) == 1
    with pytest.raises(TableSpecError, match=r"x\.yaml: table\.figure: missing; the builder"):
        spec.option("figure")
    with pytest.raises(TableSpecError, match=r"table\.columns: missing or empty"):
        parse(columns=...).need("columns")


def test_unknown_builder_and_missing_block(tmp_path):
    with pytest.raises(TableSpecError, match="table.builder: no module 'recallbench.papers.nope'"):
        resolve_builder(parse(builder="recallbench.papers.nope.table"))
    with pytest.raises(TableSpecError, match="Did you mean 'agreement_table'"):
        resolve_builder(parse(builder="recallbench.papers.lufy.memories.agreement_tabel"))
    (tmp_path / "experiment").mkdir()
    (tmp_path / "experiment" / "bare.yaml").write_text("tag: bare\n")
    with pytest.raises(TableSpecError, match=r"bare\.yaml: no 'table:' block"):
        load_spec("bare", conf_dir=tmp_path)
    with pytest.raises(KeyError, match="Did you mean 'bare'"):
        load_spec("baer", conf_dir=tmp_path)


def test_cli_refuses_to_run_a_table_only_experiment(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "recallbench.cli",
            "experiment=lufy_table3",
            f"paths.results_dir={tmp_path}",
        ],
        capture_output=True,
        text=True,
        env={
            "PATH": "/usr/bin:/bin",
            "HF_HUB_OFFLINE": "1",
            "WANDB_MODE": "disabled",
            "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src"),
        },
    )
    assert done.returncode != 0
    assert "lufy_table3 is table-only" in done.stderr and "experiment=lufy_table11" in done.stderr
    assert not (tmp_path / "runs").exists()
