"""The Makefile's one reproduce rule: what ``recallbench reproduce`` runs for each kind of table."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from recallbench import CONF_DIR
from recallbench.cli.reproduce import experiment_of, listing, plan, target_of
from recallbench.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "recallbench.cli"]
MAKE = ["make", "-o", ".venv/.installed"]


def _plan(target: str, results: Path, args: list[str] | None = None) -> list[list[str]]:
    return plan(
        target,
        results=results,
        gen_args=["generator=extractive"],
        args=args or [],
        judge="lexical",
        make=MAKE,
    )


def test_target_names_map_to_experiments_and_back():
    assert experiment_of("reproduce-table-lufy-11") == "lufy_table11"
    assert experiment_of("reproduce-figure-timerag-3") == "timerag_figure3"
    assert target_of("timerag_figure3") == "reproduce-figure-timerag-3"
    with pytest.raises(ConfigError, match="reproduce-lufy-cross: expected reproduce-table-"):
        experiment_of("reproduce-lufy-cross")
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


def test_make_uses_the_pattern_rule_unless_a_target_has_its_own():
    def dry(target: str) -> str:
        done = subprocess.run(
            [*MAKE, "-n", target], cwd=ROOT, capture_output=True, text=True, check=True
        )
        return done.stdout

    assert "recallbench.cli reproduce" in dry("reproduce-table-lufy-3")
    assert "reproduce-table-lufy-3" in dry("reproduce-table-lufy-3")
    explicit = dry("reproduce-table-theanine-1")  # two datasets: its own rule
    assert "recallbench.cli reproduce" not in explicit and "dataset=cc" in explicit
