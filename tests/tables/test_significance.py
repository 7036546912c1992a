"""Paired tests against the reference row: a known large difference is significant, identical
runs are not, Holm adjusts across the table, pooled cells pair their datasets; md marks them."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from recallbench.analysis import find_runs
from recallbench.metrics.bootstrap import Additive, ci_fields, holm
from recallbench.tables.cells import summary_table
from recallbench.tables.engine import TableContext
from recallbench.tables.render import render
from recallbench.tables.significance import settings_of
from recallbench.tables.spec import TableSpecError, parse_spec

RATIO = {"fn": "ratio"}


def entry(scores: np.ndarray, prefix: str) -> dict:
    """A summary entry: mean of per-response scores, 4 responses per episode, with its CI."""
    episodes = [f"{prefix}{i // 4}" for i in range(len(scores))]
    stat = Additive.from_items(episodes, [[v, 1.0] for v in scores], RATIO)
    return {"value": float(np.mean(scores)), "n": len(scores), **ci_fields(stat)}


def spec(**block):
    base = {
        "paper": "theanine",
        "id": "table1",
        "title": "t",
        "rows": [
            {"label": "Base", "memory": "memory_retrieval"},
            {"label": "Better", "memory": "theanine"},
            {"label": "Same", "memory": "full_history"},
        ],
        "columns": [{"label": "MSC", "dataset": "msc"}],
        "metrics": {"rouge_l": {"label": "Rouge-L", "scale": 100}},
    }
    return parse_spec("theanine_table1", Path("x.yaml"), {**base, **block}, own_tag="t")


def runs(tmp_path, make_run, datasets=("msc",)):
    rng = np.random.default_rng(0)
    for dataset in datasets:
        base = rng.uniform(0.1, 0.3, 80)  # 20 episodes x 4 responses
        for memory, scores in {
            "memory_retrieval": base,
            "theanine": base + 0.4,  # a large, consistent difference
            "full_history": base + rng.normal(0, 0.02, 80),  # noise around the reference
        }.items():
            make_run(
                tmp_path,
                "t",
                f"{dataset}-{memory}",
                {"memory": memory, "dataset": dataset},
                {"rouge_l": entry(scores, f"{dataset}/")},
                config={"dataset": {"name": dataset}},
            )
    return find_runs(tmp_path, "t")


def test_large_difference_is_significant_identical_runs_are_not(tmp_path, make_run):
    built = summary_table(
        spec(reference_row="Base"), TableContext(tmp_path, runs=tuple(runs(tmp_path, make_run)))
    )
    by = {c.row: c for c in built.cells}
    better, same, base = by["Better"], by["Same"], by["Base"]
    assert better.significant is True and better.p_value < 0.01
    assert same.significant is False and same.p_value > 0.05
    assert base.p_value is None and base.significant is None  # the reference itself
    assert (better.p_holm, same.p_holm) == pytest.approx(holm([better.p_value, same.p_value]))
    assert better.ours - base.ours == pytest.approx(40.0)
    # 20 episodes differ (> 16): 99,999 random sign flips, every one below the observed
    assert better.p_value == pytest.approx(2 / 100_000)
    assert "Monte Carlo sign flips, 99,999 random assignments" in built.notes[0]
    assert "the floor is the random assignments' (2e-05), not the data's" in built.notes[0]
    assert "seed 0" in built.notes[0]
    assert "'Base'" in built.notes[0] and "2 paired tests" in built.notes[0]
    md = render(
        built.cells,
        paper="p",
        table=1,
        title="t",
        header={},
        out_dir=tmp_path,
        notes=built.notes,
    )["md"].read_text(encoding="utf-8")
    assert f"| Better | {better.ours:.2f}† [" in md and f"| Same | {same.ours:.2f} [" in md
    assert "† = differs from the reference row 'Base'" in md


def test_pooled_cells_pair_datasets(tmp_path, make_run):
    table = spec(reference_row="Base", columns=[{"label": "Avg.", "dataset": ["msc", "cc"]}])
    built = summary_table(
        table, TableContext(tmp_path, runs=tuple(runs(tmp_path, make_run, ("msc", "cc"))))
    )
    by = {c.row: c for c in built.cells}
    assert by["Better"].significant is True and by["Same"].significant is False
    assert by["Better"].episodes == 40  # 20 per dataset
    assert "sign-flip by episode within each dataset" in built.notes[0]
    # the pooled interval is recomputed (stratified) and brackets the pooled value
    for cell in built.cells:
        assert cell.ci_low <= cell.ours <= cell.ci_high


def test_cells_without_statistics_get_no_test_and_say_why(tmp_path, make_run):
    for memory, value in (("memory_retrieval", 0.2), ("theanine", 0.9)):
        make_run(
            tmp_path,
            "t",
            memory,
            {"memory": memory, "dataset": "msc"},
            {"rouge_l": {"value": value, "n": 10, "ci95": None, "ci_note": "no interval: x"}},
        )
    built = summary_table(
        spec(reference_row="Base"), TableContext(tmp_path, runs=tuple(find_runs(tmp_path, "t")))
    )
    better = next(c for c in built.cells if c.row == "Better")
    assert better.p_value is None and better.significant is None and better.ci_low is None
    assert any(
        re.fullmatch(
            r"no test \(no per-episode statistics\): \d+ cells, columns .+ x metrics Rouge-L", n
        )
        for n in built.notes
    )


def test_reference_row_must_name_a_row(tmp_path):
    with pytest.raises(TableSpecError, match="reference_row: 'Nope' is not a row label"):
        summary_table(spec(reference_row="Nope"), TableContext(tmp_path))
    with pytest.raises(TableSpecError, match="pair_by"):
        summary_table(spec(reference_row="Base", pair_by="speaker"), TableContext(tmp_path))


def test_reference_rows_by_mapping_test_only_the_listed_rows(tmp_path, make_run):
    table = spec(reference_row={"Better": "Base"})
    built = summary_table(table, TableContext(tmp_path, runs=tuple(runs(tmp_path, make_run))))
    by = {c.row: c for c in built.cells}
    assert by["Better"].significant is True and by["Same"].p_value is None
    assert "'Better' vs 'Base'" in built.notes[0] and "1 paired tests" in built.notes[0]


def test_pooled_permutation_is_exact_with_few_episodes(tmp_path, make_run):
    # 2 datasets x 2 episodes, "Better" above "Base" in every episode: of the 2^4 swaps only
    # "none" and "all" are as extreme, so the exact two-sided p is 2 / 16 (not significant);
    # a bootstrap p would be 2 / (B + 1). With 4 episodes no test can reach 0.05: the raw p is
    # kept, but the test stays out of the Holm family (no p_holm, no marker either way).
    for dataset in ("msc", "cc"):
        base = np.array([0.1, 0.2, 0.3, 0.2, 0.1, 0.3, 0.2, 0.2])
        for memory, scores in (("memory_retrieval", base), ("theanine", base + 0.5)):
            make_run(
                tmp_path,
                "t",
                f"{dataset}-{memory}",
                {"memory": memory, "dataset": dataset},
                {"rouge_l": entry(scores, f"{dataset}/")},
                config={"dataset": {"name": dataset}},
            )
    table = spec(reference_row="Base", columns=[{"label": "Avg.", "dataset": ["msc", "cc"]}])
    built = summary_table(table, TableContext(tmp_path, runs=tuple(find_runs(tmp_path, "t"))))
    better = next(c for c in built.cells if c.row == "Better")
    assert better.p_value == pytest.approx(2 / 16)
    assert better.p_holm is None and better.significant is None
    assert any("left out of the Holm family: 1 tests on 4 shared" in n for n in built.notes)


def test_one_shared_episode_is_no_test(tmp_path, make_run):
    for memory, scores in (("memory_retrieval", [0.1, 0.2]), ("theanine", [0.8, 0.9])):
        make_run(
            tmp_path,
            "t",
            memory,
            {"memory": memory, "dataset": "msc"},
            {"rouge_l": entry(np.array(scores), "msc/")},  # one episode of 2 responses
        )
    built = summary_table(
        spec(reference_row="Base"), TableContext(tmp_path, runs=tuple(find_runs(tmp_path, "t")))
    )
    assert next(c for c in built.cells if c.row == "Better").p_value is None
    assert "0 paired tests" in built.notes[0]
    assert any(
        re.fullmatch(
            r"no test \(fewer than 2 shared episodes\): \d+ cells, columns .+ x metrics Rouge-L", n
        )
        for n in built.notes
    )


def tiny_and_large(tmp_path, make_run, fixture: str = ""):
    """msc: 20 episodes; cc: 3 episodes (under ``fixture`` when given); Better = Base + 0.4."""
    rng = np.random.default_rng(1)
    for dataset, episodes in (("msc", 20), ("cc", 3)):
        base = rng.uniform(0.1, 0.3, 4 * episodes)
        data_dir = fixture if (fixture and dataset == "cc") else "/data"
        for memory, scores in {
            "memory_retrieval": base,
            "theanine": base + 0.4,
            "full_history": base + rng.normal(0, 0.02, 4 * episodes),
        }.items():
            make_run(
                tmp_path,
                "t",
                f"{dataset}-{memory}",
                {"memory": memory, "dataset": dataset},
                {"rouge_l": entry(scores, f"{dataset}/")},
                config={"dataset": {"name": dataset, "data_dir": data_dir}},
            )
    return find_runs(tmp_path, "t")


def test_tests_that_cannot_reach_alpha_stay_out_of_the_holm_family(tmp_path, make_run):
    # CC has 3 episodes: the smallest attainable p is 2^(1-3) = 0.25 > 0.05. Its 2 tests keep
    # their raw p but do not inflate the MSC tests' correction (a family of 2, not 4).
    columns = [{"label": "MSC", "dataset": "msc"}, {"label": "CC", "dataset": "cc"}]
    table = spec(reference_row="Base", columns=columns)
    built = summary_table(
        table, TableContext(tmp_path, runs=tuple(tiny_and_large(tmp_path, make_run)))
    )
    by = {(c.row, c.column): c for c in built.cells}
    better, same = by["Better", "MSC"], by["Same", "MSC"]
    assert better.p_value < 0.01 and same.p_value > 0.05
    assert better.p_holm == pytest.approx(2 * better.p_value)  # Holm over 2 tests, not 4
    assert better.significant is True
    tiny = by["Better", "CC"]
    assert tiny.p_value == pytest.approx(0.25)  # exact: 2 of the 2^3 sign flips
    assert tiny.p_holm is None and tiny.significant is None
    notes = "\n".join(built.notes)
    assert "Holm family (2 tests): rows Better, Same x columns MSC x metrics Rouge-L" in notes
    assert (
        "left out of the Holm family: 2 tests on 3 shared episode(s), of which 3 differ between "
        "the two rows (columns CC)"
    ) in notes


def test_min_attainable_p_by_hand():
    from recallbench.tables.family import min_attainable_p

    assert min_attainable_p(3, 2000) == 0.25
    assert min_attainable_p(5, 2000) == 0.0625  # > 0.05: out of the family at alpha 0.05
    assert min_attainable_p(6, 2000) == 0.03125  # can reach 0.05
    assert min_attainable_p(30, 2000) == pytest.approx(2 / 2001)  # resampling floor


def test_fixture_cells_get_no_test_and_never_pool_with_real_data(tmp_path, make_run):
    columns = [
        {"label": "MSC", "dataset": "msc"},
        {"label": "CC", "dataset": "cc"},
        {"label": "Avg.", "dataset": ["msc", "cc"]},
    ]
    table = spec(reference_row="Base", columns=columns)
    runs_ = tiny_and_large(tmp_path, make_run, fixture="data/fixtures")
    built = summary_table(table, TableContext(tmp_path, runs=tuple(runs_)))
    by = {(c.row, c.column): c for c in built.cells}
    cc, avg, msc = by["Better", "CC"], by["Better", "Avg."], by["Better", "MSC"]
    assert cc.coverage == "§" and cc.p_value is None and cc.significant is None
    # The Avg. cell leaves the 3 fixture episodes out: it is the MSC cell, 20 real episodes
    # (fewer than THEANINE Table 1's 50: ‡, not §).
    assert (avg.ours, avg.episodes, avg.coverage) == (msc.ours, 20, "‡")
    assert avg.significant is True and msc.significant is True
    notes = "\n".join(built.notes)
    assert "no test (fixture data): 2 cells, columns CC x metrics Rouge-L" in notes
    assert "Avg.: the fixture runs of cc (3 fixture episode(s)) are left out" in notes


def test_a_subset_column_is_tested_like_the_whole(tmp_path, make_run):
    """CareCall Table 4's Memory-turns cells had no test: a subset's summary entry kept no
    per-episode sums. Scored for real (``score_predictions``), a subset now keeps them, and a
    large difference on the subset's items is significant there too."""
    from recallbench.metrics.scoring import score_predictions
    from recallbench.records import Prediction

    def predictions(good: bool) -> list[Prediction]:
        out = []
        for e in range(12):
            for t in range(4):
                hit = good or t % 2 == 1  # the memory turns (t even) differ between the rows
                out.append(
                    Prediction(
                        f"e{e}-{t}", f"msc/{e}", 2, "response", "h",
                        "the red bicycle" if hit else "a cloudy morning", "the red bicycle",
                        meta={"subsets": ["memory_turns"]} if t % 2 == 0 else {},
                    )
                )  # fmt: skip
        return out

    for memory, good in (("memory_retrieval", False), ("theanine", True), ("full_history", False)):
        _, summary = score_predictions(predictions(good), ["token_f1"])
        sub = summary["metrics"]["token_f1"]["subsets"]["memory_turns"]
        assert sub["bootstrap"] and sub["per_session"]["2"]["bootstrap"]
        make_run(
            tmp_path,
            "t",
            f"msc-{memory}",
            {"memory": memory, "dataset": "msc"},
            summary["metrics"],
            config={"dataset": {"name": "msc"}},
        )
    table = spec(
        reference_row="Base",
        columns=[{"label": "Memory turns", "dataset": "msc", "subset": "memory_turns"}],
        metrics={"token_f1": {"label": "F1"}},
    )
    built = summary_table(table, TableContext(tmp_path, runs=tuple(find_runs(tmp_path, "t"))))
    by = {c.row: c for c in built.cells}
    assert by["Better"].significant is True and by["Better"].ours == pytest.approx(1.0)
    # "Same" answered exactly as the reference on every episode: no episode can move a sign
    # flip (floor 1), so its p = 1 stays out of the Holm family
    assert by["Same"].p_value == 1.0 and by["Same"].p_holm is None
    assert any("of which 0 differ" in n for n in built.notes)
    assert not any(n.startswith("no test") for n in built.notes)


def test_column_families_correct_each_column_on_its_own(tmp_path, make_run):
    # two settings (MSC, CC), 2 tests each: Holm per column multiplies the smallest p by 2, across
    # the table by 4; the matrix's columns are separate experiments (significance.family: column)
    found = runs(tmp_path, make_run, datasets=("msc", "cc"))
    columns = [{"label": "MSC", "dataset": "msc"}, {"label": "CC", "dataset": "cc"}]
    ctx = TableContext(tmp_path, runs=tuple(found))
    whole = summary_table(spec(reference_row="Base", columns=columns), ctx)
    apart = summary_table(
        spec(reference_row="Base", columns=columns, significance={"family": "column"}), ctx
    )
    for column in ("MSC", "CC"):
        mine = {c.row: c for c in apart.cells if c.column == column}
        table = {c.row: c for c in whole.cells if c.column == column}
        p = mine["Better"].p_value
        assert p == table["Better"].p_value  # the same test, corrected over another family
        assert mine["Better"].p_holm == pytest.approx(min(1.0, 2 * p))
        assert table["Better"].p_holm == pytest.approx(min(1.0, 4 * p))
    notes = "\n".join(apart.notes)
    assert "within each column, a family of its own (tests per column: MSC: 2; CC: 2)" in notes
    assert "Holm families (4 tests)" in notes
    with pytest.raises(TableSpecError, match="significance.family"):
        settings_of(spec(reference_row="Base", significance={"family": "row"}))
