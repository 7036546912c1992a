"""Frames carry the run key and every overridden config key as a typed column, and keep their
columns when there are no runs."""

from __future__ import annotations

import pandas as pd

from recallbench.analysis import load_predictions, load_summaries, load_usage, runs_in


def _sweep(tmp_path, make_run):
    for k, f1 in ((2, 0.25), (6, 0.75)):
        make_run(
            tmp_path,
            "ksweep",
            "20260101-000000",
            f"msc-mr-memory.k_{k}",
            overrides=("dataset=msc", f"memory.k={k}"),
            config={"memory": {"k": k}},
            metrics={"f1": f1},
        )
    # a run of another tag that never overrode memory.k: it shows its configured default
    make_run(tmp_path, "adhoc", "20260102-000000", "msc-mr", overrides=("dataset=msc",))
    make_run(tmp_path, "lufy", "20260103-000000", "lufy-x", config={"memory": {"alpha": 1}})
    return runs_in(tmp_path)


def test_a_sweep_is_data_every_override_a_typed_column(tmp_path, make_run):
    frame = load_summaries(_sweep(tmp_path, make_run))
    whole = frame[(frame.session == "all") & (frame.metric == "f1")].set_index(["tag", "job"])
    assert whole.loc[("ksweep", "msc-mr-memory.k_2"), "memory.k"] == 2
    assert whole.loc[("ksweep", "msc-mr-memory.k_6"), "value"] == 0.75
    assert whole.loc[("adhoc", "msc-mr"), "memory.k"] == 6  # its default from config.yaml
    assert pd.isna(whole.loc[("lufy", "lufy-x"), "memory.k"])  # no such key: missing, not 0
    assert str(frame["memory.k"].dtype) == "Int64"  # integers, although one run lacks the key
    assert set(frame["dataset"].dropna()) == {"msc"}
    by_k = whole.dropna(subset=["memory.k"]).groupby("memory.k").value.mean()
    assert by_k.to_dict() == {2: 0.25, 6: (0.75 + 0.5) / 2}  # k=6: the sweep's and adhoc's
    assert set(frame.session) == {"all", "3"}


def test_usage_and_predictions_carry_the_key(tmp_path, make_run):
    runs = _sweep(tmp_path, make_run)
    usage = load_usage(runs)
    assert list(usage[["tag", "memory.k", "calls"]].itertuples(index=False, name=None))[:2] == [
        ("ksweep", 2, 4),
        ("ksweep", 6, 4),
    ]
    (runs[0].path / "predictions.jsonl").write_text(
        '{"pred_id": "p1", "episode_id": "e", "session_index": 3, "kind": "response", '
        '"output": "hi", "reference": "hey", "usage": {"cost_usd": 0.5}}\n'
    )
    preds = load_predictions(runs[0])
    assert preds.loc[0, "usage_cost_usd"] == 0.5
    assert tuple(preds.loc[0, ["tag", "stamp", "job"]]) == runs[0].key


def test_frames_without_runs_keep_their_columns():
    summaries = load_summaries([])
    assert summaries[summaries.session == "all"].empty  # no AttributeError on an empty frame
    assert {"tag", "stamp", "job", "metric", "value"} <= set(summaries.columns)
    assert {"tag", "calls", "cost_usd"} <= set(load_usage([]).columns)
