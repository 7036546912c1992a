"""The Makefile's reproduce rules: what ``recallbench reproduce`` runs for each kind of table, and
the one list of targets (conf/experiment/) that make, ``make tables`` and the golden set read."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from recallbench import CONF_DIR
from recallbench.cli.reproduce import (
    Step,
    answered,
    block_of,
    experiment_of,
    group,
    listing,
    settings,
    steps,
    target_of,
    targets,
)
from recallbench.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "recallbench.cli"]
MAKE = ["make", "-o", ".venv/.installed"]


def _steps(target: str, results: Path, args: list[str] | None = None, **kw: Any) -> list[Step]:
    return steps(
        target,
        results=results,
        gen_args=["generator=extractive"],
        args=args or [],
        judge="lexical",
        make=MAKE,
        **kw,
    )


def _plan(target: str, results: Path, args: list[str] | None = None, **kw: Any) -> list[list[str]]:
    """The command lines of ``target``'s steps, as ``--dry-run`` prints them."""
    return [step.argv for step in _steps(target, results, args, **kw)]


def test_each_step_is_planned_with_its_kind_and_answered_by_it(tmp_path):
    """What this process may answer is decided on the planned step, not its command line read
    back: make and scripts always run as their own process, a sweep keeps ``-m`` as a field."""
    (fit, _), (need, _) = (
        _steps("reproduce-table-lufy-2", tmp_path),
        _steps("reproduce-table-lufy-3", tmp_path),
    )
    sweep, table = _steps("reproduce-table-lufy-13", tmp_path)
    assert [fit.kind, need.kind, sweep.kind, table.kind] == ["script", "make", "sweep", "table"]
    assert sweep.multirun and sweep.words[0] == "experiment=lufy_table13"
    assert sweep.argv == [*CLI, "-m", *sweep.words] and table.argv == [*CLI, "table", *table.words]
    # A script whose words spell the project's own command is still a script: it runs.
    spelled = Step("script", ("-m", "recallbench.cli", *sweep.argv[3:]))
    assert spelled.argv == sweep.argv and not answered(spelled) and not answered(need)
    assert not answered(Step("sweep", (*sweep.words, "plan=true"), multirun=True))


def test_target_names_map_to_experiments_and_back():
    assert experiment_of("reproduce-table-lufy-11") == "lufy_table11"
    assert experiment_of("reproduce-figure-timerag-3") == "timerag_figure3"
    assert target_of("timerag_figure3") == "reproduce-figure-timerag-3"
    assert experiment_of("reproduce-lufy-cross") == "lufy_cross"  # reproduce.target names it
    assert experiment_of("attribution-lufy") == "attribution_lufy"
    with pytest.raises(ConfigError, match="reproduce-lufy-crosss: expected reproduce-table-"):
        experiment_of("reproduce-lufy-crosss")
    with pytest.raises(ConfigError, match="no such experiment"):
        _plan("reproduce-table-lufy-99", Path("results"))


def test_a_sweep_with_a_judge_runs_it_with_the_judge_then_renders(tmp_path):
    steps = _plan("reproduce-table-lufy-13", tmp_path, ["episodes=2"])
    assert steps == [
        [*CLI, "-m", "experiment=lufy_table13", "judge=lexical", "generator=extractive",
         "episodes=2"],
        [*CLI, "table", "lufy_table13", "generator=extractive"],
    ]  # fmt: skip


def test_a_sweep_without_a_judge_gets_no_judge(tmp_path):
    first, _ = _plan("reproduce-table-carecall-6", tmp_path)
    assert first == [*CLI, "-m", "experiment=carecall_table6", "generator=extractive"]


def test_a_table_of_another_experiments_runs_makes_them_only_when_missing(tmp_path):
    assert _plan("reproduce-table-lufy-3", tmp_path) == [
        [*MAKE, "reproduce-table-lufy-11"],
        [*CLI, "table", "lufy_table3", "generator=extractive"],
    ]
    (tmp_path / "runs" / "lufy_table11" / "20260101-000000" / "lufy").mkdir(parents=True)
    assert _plan("reproduce-table-lufy-3", tmp_path) == [
        [*CLI, "table", "lufy_table3", "generator=extractive"]
    ]


def test_a_table_that_reads_no_runs_takes_args_as_its_own_overrides(tmp_path):
    steps = _plan("reproduce-table-lufy-8", tmp_path, ["generator.model=m"])
    assert steps == [[*CLI, "table", "lufy_table8", "generator=extractive", "generator.model=m"]]


def test_every_experiment_with_a_table_is_listed_with_its_title():
    listed = dict(listing())
    paper_table = re.compile(r"^[a-z]+_(table|figure)\d+$")  # not matrix_token_f1, own tables
    tables = [p.stem for p in (CONF_DIR / "experiment").glob("*.yaml") if paper_table.match(p.stem)]
    assert "lufy_table11" in tables and "timerag_figure3" in tables
    assert {target_of(name) for name in tables} <= set(listed)
    assert listed["reproduce-table-lufy-11"].startswith("LUFY Table 11")


def test_the_makefile_has_pattern_rules_only_and_every_target_goes_through_them():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    rules = re.findall(r"^((?:reproduce|attribution)-[\w%-]+):", makefile, re.M)
    assert sorted(rules) == ["attribution-%", "reproduce-%", "reproduce-list"]

    def dry(target: str) -> str:
        done = subprocess.run(
            [*MAKE, "-n", target], cwd=ROOT, capture_output=True, text=True, check=True
        )
        return done.stdout

    assert "recallbench.cli reproduce" in dry("reproduce-table-theanine-1")
    # its own src first: a worktree sharing another checkout's editable venv ran that code
    assert f"PYTHONPATH={ROOT}/src " in dry("reproduce-table-theanine-1")
    assert "reproduce --judge" in dry("attribution-lufy")


def test_two_datasets_each_with_its_data_folder(tmp_path, monkeypatch):
    """theanine_table1's reproduce.sweeps: MSC from the data folder, CC from its own."""
    monkeypatch.chdir(ROOT)  # a fallback is relative to where make runs: the checkout
    values = settings({}, tmp_path / "data", tmp_path)
    msc, cc, table = _plan("reproduce-table-theanine-1", tmp_path, values=values)
    assert msc == [*CLI, "-m", "experiment=theanine_table1", "dataset=msc", "generator=extractive"]
    fixtures = str(ROOT / "data" / "fixtures")  # no CC under the data folder: the fixtures
    assert cc[4:] == ["experiment=theanine_table1", "dataset=cc", f"dataset.data_dir={fixtures}",
                      "generator=extractive"]  # fmt: skip
    assert table == [*CLI, "table", "theanine_table1", "generator=extractive"]
    (tmp_path / "data" / "conversation_chronicles").mkdir(parents=True)
    (tmp_path / "data" / "conversation_chronicles" / "train.jsonl").write_text("{}\n")
    assert settings({}, tmp_path / "data", tmp_path)["cc_data"] == str(tmp_path / "data")
    given = settings({"cc_data": str(tmp_path / "cc")}, tmp_path / "data", tmp_path)
    assert given["cc_data"] == str(tmp_path / "cc")  # CC_DATA_DIR=... wins


def test_placeholders_the_fixed_judge_and_hydra_escapes(tmp_path):
    values = settings({"answer_key": "key.jsonl"}, tmp_path, tmp_path)
    sweep, _ = _plan("reproduce-table-caim-3", tmp_path, values=values)
    answer_key = f"dataset.options.answer_key={Path('key.jsonl').absolute()}"
    assert sweep[4:] == [
        "experiment=caim_table3",
        answer_key,
        "generator=extractive",
    ]  # judge: false
    assert settings({}, tmp_path, tmp_path)["answer_key"] == "default"
    _, lamp1, _ = _plan("reproduce-figure-timerag-5", tmp_path, values=values)
    assert lamp1[-2] == "job=lamp1-budget-${memory.budget}"  # \${...} in the yaml, for OmegaConf
    qa = _plan("reproduce-table-locomo-qa", tmp_path)  # an alias fixes the judge
    assert qa[0][4:6] == ["experiment=locomo_table1", "judge=mem0_j"]
    assert _plan("reproduce-table-locomo-1", tmp_path)[0][5] == "judge=lexical"


def test_an_unknown_placeholder_names_the_experiment(tmp_path):
    conf = tmp_path / "conf"
    (conf / "experiment").mkdir(parents=True)
    (conf / "experiment" / "toy_table1.yaml").write_text(
        "table: {title: Toy}\nreproduce:\n  sweeps:\n    - ['dataset.data_dir={nowhere}']\n"
    )
    with pytest.raises(ConfigError, match=r"toy_table1.yaml reproduce.sweeps: unknown .*nowhere"):
        _plan("reproduce-table-toy-1", tmp_path, conf_dir=conf)


def test_needs_scripts_and_several_tables(tmp_path):
    steps = _plan("attribution-teafarm", tmp_path, values=settings({}, tmp_path, tmp_path))
    assert steps[0] == [*MAKE, "reproduce-table-theanine-4"]  # its runs are missing
    assert [s[4:6] for s in steps[1:3]] == [["experiment=attribution_teafarm_oracle",
                                              "dataset=msc"]] + [["experiment=attribution_teafarm_oracle",
                                              "dataset=cc"]]  # fmt: skip
    (tmp_path / "runs" / "theanine_table4" / "20260101-000000" / "job").mkdir(parents=True)
    assert _plan("attribution-teafarm", tmp_path)[0][0] == sys.executable
    fit, table = _plan("reproduce-table-lufy-2", tmp_path, values=settings({}, tmp_path, tmp_path))
    assert fit == [sys.executable, "scripts/fit_lufy_weights.py", "--data-dir", str(tmp_path),
                   "--cache-dir", f"{tmp_path}/cache",
                   "--out", f"{tmp_path}/fits/lufy_table2.json"]  # fmt: skip
    assert _plan("reproduce-table-lufy-11", tmp_path)[-1][4:] == [
        "lufy_table11", "lufy_table16", "lufy_table17", "lufy_table18", "generator=extractive"
    ]  # fmt: skip
    planned = _plan("reproduce-table-lufy-13", tmp_path, ["plan=true"])  # estimate-table-*
    assert len(planned) == 1 and "table" not in planned[0]


def test_lists_put_a_target_after_the_targets_whose_runs_it_reads():
    tables = list(group("tables"))
    assert tables.index("reproduce-table-lufy-11") < tables.index("reproduce-table-lufy-3")
    assert tables.index("reproduce-table-timerag-6") < tables.index("reproduce-table-timerag-4")
    assert "reproduce-table-lufy-2" not in tables  # slow: why_not says so
    assert list(group("attribution")) == [
        "attribution-caim", "attribution-lufy", "attribution-teafarm", "attribution-timerag"
    ]  # fmt: skip
    assert group("golden")["reproduce-table-theanine-1"] == ["episodes=2", "metrics=lexical"]


def test_every_paper_target_is_in_a_list_or_says_why_not():
    """make tables, make attribution and the golden set derive from the experiments: a target
    in none of them (nor rendered by one that is) states its reason in reproduce.why_not."""
    known = targets()
    listed = {t for name in ("tables", "attribution", "golden") for t in group(name)}
    rendered = set()
    for name in listed:
        data = yaml.safe_load(
            (CONF_DIR / "experiment" / f"{known[name].experiment}.yaml").read_text()
        )
        rendered |= set(block_of(data).get("tables") or [known[name].experiment])
    for target in known.values():
        path = CONF_DIR / "experiment" / f"{target.experiment}.yaml"
        why = block_of(yaml.safe_load(path.read_text(encoding="utf-8"))).get("why_not")
        if target.alias:
            continue
        if target.name in listed or target.experiment in rendered:
            assert not why, f"{path}: in a list, yet reproduce.why_not says {why!r}"
        else:
            assert why, f"{target.name}: in no list (reproduce.lists) and no reproduce.why_not"


def test_make_help_lists_every_target():
    done = subprocess.run(
        ["make", "--no-print-directory", "help", f"VENV={sys.prefix}"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    shown = {line.split()[0] for line in re.sub(r"\x1b\[[0-9;]*m", "", done.stdout).splitlines()}
    assert {name for name, _ in listing()} <= shown
    assert {"reproduce-table-theanine-1", "reproduce-table-locomo-qa", "attribution-teafarm",
            "reproduce-lufy-cross", "tables", "golden"} <= shown  # fmt: skip
