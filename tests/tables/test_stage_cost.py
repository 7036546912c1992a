"""The per-stage cost table (tables/stage_cost.py) on hand-made runs: LoCoMo's per-conversation
columns (option ``per: conversation``) against values computed by hand from the files."""

from __future__ import annotations

import json

import pytest
import yaml

from recallbench.analysis import find_runs
from recallbench.tables import TableContext
from recallbench.tables.spec import load_spec
from recallbench.tables.stage_cost import cost_table


def _pred(episode: str, session: int, kind: str, n: int, **meta: float) -> dict[str, object]:
    return {
        "pred_id": f"{episode}/{kind}/{session}/{n}",
        "episode_id": episode,
        "session_index": session,
        "kind": kind,
        "prompt_hash": "h",
        "output": "x",
        "meta": meta,
    }


def _run(
    tmp_path,
    memory: str,
    rows: list[dict[str, object]],
    usage: dict[str, object],
    attempt: int = 2,
    **config: object,
):
    run = tmp_path / "runs" / "locomo_table1" / "20260101-000000" / f"locomo-{memory}"
    run.mkdir(parents=True)
    log = {"status": "finished", "n_episodes": 2, "started_unix": 100.0, "finished_unix": 400.0}
    log["attempt"] = attempt
    (run / "run.json").write_text(json.dumps(log))
    config = {
        "choices": {"memory": memory},
        "generator": {"backend": "extractive", "model": "extractive"},
        "dataset": {"options": {"conversations": None}},
        **config,
    }
    (run / "config.yaml").write_text(yaml.safe_dump(config))
    (run / "summary.json").write_text(json.dumps({"metrics": {}}))
    (run / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (run / "usage.json").write_text(json.dumps(usage))


def test_per_conversation_columns_from_the_runs_files(tmp_path):
    # two conversations: memory written per session (observe_s), 3 questions in all
    rows = [
        _pred("c1", 1, "memory", 0, observe_s=2.0),
        _pred("c1", 2, "memory", 0, observe_s=4.0),
        _pred("c2", 1, "memory", 0, observe_s=6.0),
        _pred("c1", 2, "answer", 0, recall_s=0.1, generate_s=0.3),
        _pred("c1", 2, "answer", 1, recall_s=0.2, generate_s=0.3),
        _pred("c2", 1, "answer", 0, recall_s=0.3, generate_s=0.6),
    ]
    stage = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
    usage = {
        "by_stage": {
            "memory": {**stage, "calls": 10, "prompt_tokens": 900, "completion_tokens": 100},
            "answer": {**stage, "calls": 3, "prompt_tokens": 30, "completion_tokens": 6},
            "judge": {**stage, "calls": 3, "prompt_tokens": 12, "completion_tokens": 3},
        },
        "compute": {"seconds": {"embeddings": 5.0, "embedder_load": 2.5}},
    }
    _run(tmp_path, "graphiti", rows, usage)
    runs = tuple(find_runs(tmp_path, "locomo_table1"))
    built = cost_table(load_spec("locomo_cost"), TableContext(results_dir=tmp_path, runs=runs))
    cell = {c.column: c.ours for c in built.cells if c.row == "graphiti"}
    assert cell["Conversations"] == 2 and cell["Questions"] == 3
    assert cell["Memory s/conv"] == pytest.approx((2 + 4 + 6) / 2)  # summed over sessions
    assert cell["Memory LLM calls/conv"] == pytest.approx(10 / 2)
    assert cell["Memory tokens/conv"] == pytest.approx(1000 / 2)
    assert cell["Recall s/q"] == pytest.approx(0.2)
    assert cell["Answer s/q"] == pytest.approx(0.4)
    assert cell["Answer tokens/q"] == pytest.approx(36 / 3)
    assert cell["Judge tokens/q"] == pytest.approx(15 / 3)
    assert cell["Embedding s (run)"] == pytest.approx(7.5)
    assert cell["Wall min (run)"] == pytest.approx(5.0)
    assert set(built.row_runs) == {"graphiti"}  # no variant: LoCoMo's rows are the methods
    # a resumed run's wall is its last attempt's only: the table says so
    assert any("graphiti (attempt 2)" in note for note in built.notes)


def test_embedding_seconds_beyond_the_wall_are_said_to_be_threads_added(tmp_path):
    # a run of 300 s whose store embedded from several threads: 400 s of embedding timed
    rows = [_pred("c1", 1, "memory", 0, observe_s=1.0), _pred("c1", 1, "answer", 0)]
    _run(tmp_path, "langmem", rows, {"compute": {"seconds": {"embeddings": 400.0}}}, attempt=1)
    _run(tmp_path, "mem0", rows, {"compute": {"seconds": {"embeddings": 290.0}}}, attempt=1)
    runs = tuple(find_runs(tmp_path, "locomo_table1"))
    built = cost_table(load_spec("locomo_cost"), TableContext(results_dir=tmp_path, runs=runs))
    [note] = [n for n in built.notes if n.startswith("Embedding s exceeds")]
    assert "langmem (400 s in 5.0 min)" in note and "mem0" not in note


def test_a_subset_run_is_labelled_with_its_subset(tmp_path):
    # LongMemEval S measured on a few questions: the row says how many and how they were drawn
    rows = [_pred("q1", 1, "answer", 0)]
    s = {"dataset": {"options": {"variant": "s"}}}
    _run(tmp_path, "langmem", rows, {}, attempt=1, episodes=3, **s)
    _run(tmp_path, "mem0", rows, {}, attempt=1, dataset={"options": {"variant": "s", "limit": 5}})
    _run(tmp_path, "no_memory", rows, {}, attempt=1, **s)
    runs = tuple(find_runs(tmp_path, "locomo_table1"))
    built = cost_table(
        load_spec("longmemeval_table4"), TableContext(results_dir=tmp_path, runs=runs)
    )
    assert set(built.row_runs) == {"langmem (s, 3 sampled)", "mem0 (s, first 5)", "no_memory (s)"}


def test_an_unknown_per_option_names_the_file(tmp_path):
    spec = load_spec("locomo_cost")
    bad = type(spec)(**{**spec.__dict__, "options": {"per": "session"}})
    with pytest.raises(Exception, match="locomo_cost.*per.*'session'"):
        cost_table(bad, TableContext(results_dir=tmp_path, runs=()))
