"""LongMemEval's dataset-statistics table on the fixtures (papers/longmemeval/dataset_table.py) and its
cost table's rows (tables/stage_cost.py)."""

from __future__ import annotations

import json

import pytest
import yaml

from recallbench.analysis import find_runs
from recallbench.datasets.longmemeval import load
from recallbench.papers.longmemeval.dataset_table import variant_stats
from recallbench.tables import TableContext
from recallbench.tables.engine import UNTESTED, untested_notes
from recallbench.tables.spec import load_spec
from recallbench.tables.stage_cost import cost_table


def test_variant_stats_on_the_fixtures(fixtures_dir):
    oracle = variant_stats(load(fixtures_dir, "oracle"))
    assert oracle["questions"] == 4 and oracle["abstention"] == 1
    assert oracle["type:multi-session"] == 1 and oracle["type:temporal-reasoning"] == 0
    assert (oracle["sessions_min"], oracle["sessions_max"]) == (1, 2)
    assert oracle["sessions_mean"] == pytest.approx(5 / 4)
    assert oracle["turns_mean"] == pytest.approx((4 + 6 + 4 + 4) / 4)
    # answer_fx0b1 appears in two histories: counted once
    assert oracle["distinct_sessions"] == 4 and oracle["missing"] == 0
    s = variant_stats(load(fixtures_dir, "s"))
    # the S fixture lacks two oracle questions; a filler session recurs in both histories
    assert s["questions"] == 2 and s["missing"] == 2
    assert s["distinct_sessions"] == 6


def test_cost_table_maps_each_row_to_its_run_so_rows_are_untested(tmp_path):
    # the cost table lays methods side by side without a test: the engine must say so
    for memory in ("no_memory", "mem0"):
        run = tmp_path / "runs" / "longmemeval_table1" / "20260101-000000" / f"lme-{memory}"
        run.mkdir(parents=True)
        (run / "run.json").write_text(json.dumps({"status": "finished", "n_episodes": 2}))
        config = {
            "choices": {"memory": memory},
            "generator": {"backend": "extractive", "model": "extractive"},
            "dataset": {"options": {"variant": "oracle"}},
        }
        (run / "config.yaml").write_text(yaml.safe_dump(config))
        (run / "summary.json").write_text(json.dumps({"metrics": {}}))
    runs = tuple(find_runs(tmp_path, "longmemeval_table1"))
    spec = load_spec("longmemeval_table4")
    built = cost_table(spec, TableContext(results_dir=tmp_path, runs=runs))
    assert set(built.row_runs) == {"mem0 (oracle)", "no_memory (oracle)"}
    assert untested_notes(spec, built, built.cells) == [UNTESTED]
