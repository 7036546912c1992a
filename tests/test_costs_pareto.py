"""Per-episode cost, cost ratio and phase times from run folders; Pareto frontiers and PNGs."""

from __future__ import annotations

import json

import pytest

from recallbench.analysis.costs import cost_table, run_cost
from recallbench.analysis.pareto import pareto_front, plot_pareto
from recallbench.papers.theanine.efficiency import efficiency_figures


def bucket(calls, pt, ct, cost, latency):
    return {
        "calls": calls,
        "cached_calls": 0,
        "prompt_tokens": pt,
        "completion_tokens": ct,
        "cost_usd": cost,
        "cost_usd_without_cache": cost,
        "latency_s": latency,
    }


def make_run(path, *, memory_cost, answer_cost, n=2, mauve=0.4, timings=None, tokens=1.0):
    """A run folder: memory task, response task and a judge task that must not count."""
    mem = bucket(4, int(tokens * 1_000_000), int(tokens * 100_000), memory_cost, 3.0)
    ans = bucket(6, int(tokens * 200_000), int(tokens * 20_000), answer_cost, 1.5)
    judge = bucket(2, 500_000, 1000, 9.0, 7.0)
    usage = {
        "tasks": {"theanine.link_relation": mem, "response": ans, "judge.teafarm": judge},
        "by_stage": {"memory": mem, "answer": ans, "judge": judge},
    }
    path.mkdir(parents=True)
    (path / "usage.json").write_text(json.dumps(usage))
    (path / "run.json").write_text(json.dumps({"n_episodes": n, "status": "finished"}))
    summary = {"metrics": {"mauve": {"value": mauve, "session_mean": mauve}}}
    (path / "summary.json").write_text(json.dumps(summary))
    lines = [  # prediction records as the runner writes them (run.read parses them whole)
        json.dumps(
            {"pred_id": f"p{i}", "episode_id": "e", "session_index": 1, "kind": "timing"}
            | {"prompt_hash": "", "output": "", "meta": m}
        )
        for i, m in enumerate(timings or [])
    ]
    (path / "predictions.jsonl").write_text("\n".join(lines) + ("\n" if lines else ""))
    return path


def test_cost_per_episode_ratio_and_repricing(tmp_path):
    ours = make_run(tmp_path / "ours", memory_cost=0.02, answer_cost=0.007)
    base = make_run(tmp_path / "base", memory_cost=0.0, answer_cost=0.0054)
    c = run_cost(ours, price_model="gpt-3.5-turbo-0125")
    assert c.cost_recorded == pytest.approx((0.02 + 0.007) / 2)  # judge's 9.0 not counted
    # gpt-3.5-turbo-0125: $0.50 / $1.50 per 1M tokens; (1.2M in, 120k out) over 2 episodes
    assert c.cost_priced == pytest.approx((1.2 * 0.5 + 0.12 * 1.5) / 2)
    assert (c.memory_s, c.retrieval_rg_s) == (1.5, 0.75) and "usage.json" in c.time_source
    table = cost_table({"THEANINE": ours, "Memory Retrieval": base}, "THEANINE")
    assert table["THEANINE"]["cost_ratio"] == 1.0
    assert table["Memory Retrieval"]["cost_ratio"] == pytest.approx(0.0054 / 0.027)
    with pytest.raises(KeyError, match="reference row"):
        cost_table({"a": ours}, "THEANINE")
    with pytest.raises(KeyError, match="no price"):
        run_cost(ours, price_model="gpt-9")


def test_wall_clock_timings_win_over_llm_latency(tmp_path):
    timings = [{"observe_s": 2.0}, {"observe_s": 4.0}, {"recall_s": 0.5, "generate_s": 1.5}]
    c = run_cost(make_run(tmp_path / "r", memory_cost=0, answer_cost=0, timings=timings))
    assert (c.memory_s, c.retrieval_rg_s) == (3.0, 1.0) and c.time_source.startswith("wall")


def test_missing_run_files_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="usage.json not found"):
        run_cost(tmp_path)


@pytest.mark.parametrize(
    ("points", "efficient"),
    [
        ({"a": (1, 10), "b": (2, 20), "c": (2, 15), "d": (3, 20), "e": (0.5, 5)}, {"a", "b", "e"}),
        ({"x": (1, 1), "y": (1, 1)}, {"x", "y"}),  # identical points do not dominate each other
        (
            {"cheap_bad": (0.1, 1), "dear_good": (9, 9), "dear_bad": (9, 1)},
            {"cheap_bad", "dear_good"},
        ),
        # THEANINE Table 8 cost vs Table 1/2 Mauve (avg.): THEANINE and Memory Retrieval are on it
        (
            {
                "THEANINE": (0.0135, 41.52),
                "Memory Retrieval": (0.0023, 22.11),
                "MemoChat": (0.0076, 11.42),
            },
            {"THEANINE", "Memory Retrieval"},
        ),
    ],
)
def test_pareto_front(points, efficient):
    assert {k for k, v in pareto_front(points).items() if v} == efficient


def test_pareto_rejects_nan(tmp_path):
    with pytest.raises(ValueError, match="not finite"):
        pareto_front({"a": (float("nan"), 1.0)})
    with pytest.raises(ValueError, match="no points"):
        plot_pareto({}, "x", "y", "t", tmp_path / "a.png")


def test_efficiency_figures_write_pngs(tmp_path):
    runs = {
        "THEANINE": make_run(tmp_path / "t", memory_cost=0.02, answer_cost=0.007, mauve=0.41),
        "Memory Retrieval": make_run(
            tmp_path / "m", memory_cost=0.0, answer_cost=0.005, mauve=0.22
        ),
        "Worse": make_run(tmp_path / "w", memory_cost=0.03, answer_cost=0.01, mauve=0.10),
    }
    out = efficiency_figures(
        runs, tmp_path / "fig", reference="THEANINE", metrics={"mauve": "Mauve"}
    )
    assert len(out["figures"]) == 3
    for png in out["figures"]:
        assert open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
        assert open(png[: -len("png")] + "pdf", "rb").read(5) == b"%PDF-"  # and its PDF
    assert out["pareto"]["mauve"]["cost"] == {
        "THEANINE": True,
        "Memory Retrieval": True,
        "Worse": False,
    }
    assert out["costs"]["Worse"]["cost_ratio"] == pytest.approx(0.04 / 0.027)


def test_table8_and_figures_from_an_experiment(tmp_path):
    from recallbench.cli import render_table

    stamp = tmp_path / "runs" / "theanine_table8" / "s1"
    for memory, tokens, mauve in (("theanine", 1.0, 0.4), ("memory_retrieval", 0.2, 0.2)):
        for dataset in ("msc", "cc"):
            run = make_run(
                stamp / f"{dataset}-{memory}",
                memory_cost=0.0,
                answer_cost=0.0,
                mauve=mauve,
                tokens=tokens,
            )
            choices = {"memory": memory, "dataset": dataset}
            (run / "config.yaml").write_text(json.dumps({"choices": choices}))
    paths = render_table("theanine_table8", [f"paths.results_dir={tmp_path}"])
    report = json.loads(paths["json"].read_text())
    assert paths["json"] == tmp_path / "figures" / "theanine" / "efficiency.json"
    assert set(report["datasets"]) == {"cc", "msc"}
    msc = report["datasets"]["msc"]
    assert len(msc["figures"]) == 3  # mauve x (cost, memory time, retrieval+RG time)
    assert {"row": "THEANINE", "metric": "bleu4", "axis": "cost"} in msc["missing"]  # no bleu4
    csv = (tmp_path / "tables" / "theanine_table8.csv").read_text()
    row = next(line for line in csv.splitlines() if line.startswith("Memory Retrieval,"))
    # repriced at the yaml's gpt-3.5-turbo-0125: a fifth of the tokens -> a fifth of the cost
    assert ",Cost Ratio (ours = 1),0.2," in row
